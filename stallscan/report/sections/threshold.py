"""Report section "Threshold": the recommended gap threshold, its bootstrap interval, the cost curve, and the
router's rule variants (errors each removes / adds versus the router order, its recommended threshold) with
`rule_advice`, the one sentence saying which single rule change would help this corpus most."""

from __future__ import annotations

from typing import Any

import duckdb
import numpy as np
from rich.console import Group

from stallscan.replay.boundary_variants import VARIANTS
from stallscan.report.render_sweep import sweep_renderable, sweep_view
from stallscan.report.section import ReportOptions, Section
from stallscan.sweep.core import ALL_POLICIES, run_sweep, thresholds_grid

CURVE_STEP = 0.25  # seconds between curve points kept in the report data


def collect(con: duckdb.DuckDBPyConnection, opts: ReportOptions) -> dict[str, Any]:
    res = run_sweep(
        con,
        thresholds_grid(0.0, 30.0, 0.05),
        bootstrap=opts.bootstrap,
        seed=0,
        policies=ALL_POLICIES,
        current=opts.threshold,
    )
    keep = np.isclose(np.mod(res.thresholds + 1e-9, CURVE_STEP), 0, atol=1e-6) | np.isclose(
        res.thresholds, opts.threshold
    )
    curves = []
    for c in res.curves:
        if c.policy in VARIANTS:  # the variants' curves stay in `stallscan sweep`; the report keeps their table
            continue
        curves.append(
            {
                "policy": c.policy,
                "group": c.group,
                "points": [
                    {"threshold": float(t), "cost": float(v), "auto_as_human": int(fp), "human_as_auto": int(fn)}
                    for t, v, fp, fn, k in zip(c.thresholds, c.cost, c.all["fp"], c.all["fn"], keep)
                    if k
                ],
            }
        )
    return {
        "cost_auto_as_human": res.cost_auto_as_human,
        "cost_human_as_auto": res.cost_human_as_auto,
        "bootstrap": opts.bootstrap,
        "recommendations": [dict(v) for v in res.recommendation.values()],
        "curves": curves,
        "variants": [variant_row(v) for v in res.variants],
        "rule_advice": res.rule_advice,
        "tool_results_left_out": res.left_out,
        "_sweep": sweep_view(res),  # what the terminal renders (private: not in --format json)
    }


def variant_row(v: dict[str, Any]) -> dict[str, Any]:
    """One flat row per rule variant (the report's tables take scalars)."""
    ref = v["at_reference"]
    at = f"at_{ref['threshold']:g}s"
    return {
        "policy": v["policy"],
        "group": v["group"],
        "threshold": v["threshold"],
        "interval": v["interval"],
        "errors": v["errors"],
        "auto_as_human": v["auto_as_human"],
        "human_as_auto": v["human_as_auto"],
        "removed": v["removed"],
        "added": v["added"],
        "router_threshold": v["router_threshold"],
        "router_errors": v["router_errors"],
        f"removed_{at}": ref["removed"],
        f"added_{at}": ref["added"],
    }


def render(data: dict[str, Any]) -> Group:
    return Group("[bold]Threshold[/]", sweep_renderable(data["_sweep"]))


def summary(data: dict[str, Any]) -> Group:
    return Group("[bold]Threshold[/]", sweep_renderable(data["_sweep"], compact=True))


SECTION = Section("threshold", "Threshold", collect, render, summary)
