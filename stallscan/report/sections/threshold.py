"""Report section "Threshold": the recommended gap threshold, its bootstrap interval, the cost curve."""

from __future__ import annotations

from typing import Any

import duckdb
import numpy as np
from rich.console import Group

from stallscan.report.registry import ReportOptions, Section, register
from stallscan.report.render_sweep import sweep_renderable
from stallscan.sweep.core import POLICIES, run_sweep, thresholds_grid

CURVE_STEP = 0.25  # seconds between curve points kept in the report data


def collect(con: duckdb.DuckDBPyConnection, opts: ReportOptions) -> dict[str, Any]:
    res = run_sweep(con, thresholds_grid(0.0, 30.0, 0.05), bootstrap=opts.bootstrap, seed=0, policies=POLICIES)
    keep = np.isclose(np.mod(res.thresholds + 1e-9, CURVE_STEP), 0, atol=1e-6) | np.isclose(
        res.thresholds, opts.threshold
    )
    curves = []
    for c in res.curves:
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
        "_result": res,
    }


def render(data: dict[str, Any]) -> Group:
    return Group("[bold]Threshold[/]", sweep_renderable(data["_result"]))


register(Section("threshold", "Threshold", collect, render))
