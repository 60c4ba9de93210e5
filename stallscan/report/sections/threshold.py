"""Report section "Threshold": the recommended gap threshold, its bootstrap interval, the cost curve, and the
router's rule variants (errors each removes / adds versus the router order, its recommended threshold) with
`rule_advice`, the one sentence saying which single rule change would help this corpus most."""

from __future__ import annotations

from typing import Any

import duckdb
import numpy as np

from stallscan.replay.boundary_variants import VARIANTS
from stallscan.report.blocks import Block, Column, Details, LineChart, Paragraph, Table
from stallscan.report.cells import num, secs
from stallscan.report.section import ReportOptions, Section
from stallscan.report.summary_cells import refresh_boundaries_scoped
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
        counted=refresh_boundaries_scoped,  # (the tool results left out, from the cells the boundaries section reads)
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


CURVE_AT = (0.25, 0.5, 1.0, 1.5, 2.0, 3.0, 5.0, 10.0, 30.0)  # the full form's cost table


def _one_line(d: dict[str, Any]) -> str:
    """The default report's line: the router's advice and its plateau (gap-only and the variants: --full)."""
    r = next((r for r in d["recommendations"] if r["policy"] == "router" and r["group"] == "all"), None)
    if r is None or r.get("plateau") is None:
        return "no prompt to score"
    lo, hi = r["plateau"]
    return f"set {r['threshold']:g} s ({r['verdict']}); lowest cost {r['lowest_cost']:g} on {lo:.2f}–{hi:.2f} s"


def blocks(d: dict[str, Any], report: dict[str, Any], full: bool) -> list[Block]:
    if not full:
        return [Paragraph(_one_line(d))]
    from stallscan.report.render_sweep import left_out_note  # (here: it imports rich, which collect needs not)

    rows = []
    for r in d["recommendations"]:
        if r["policy"] == "labels":
            continue
        at, iv, pl = r.get("at_2s") or {}, r.get("interval"), r.get("plateau")
        rows.append(
            [
                r["policy"],
                r["group"],
                num(r["n_events"]),
                num(r["n_gap_decided"]),
                secs(r["threshold"]),
                f"{secs(pl[0])}–{secs(pl[1])}" if pl else "–",
                f"{secs(iv[0])}–{secs(iv[1])}" if iv else "–",
                num(r["cost"]),
                num(r["auto_as_human"]),
                num(r["human_as_auto"]),
                num(at.get("cost")),
            ]
        )
    cols = [Column("policy", "id", 99), Column("group", "id", 97), Column("prompts", keep=70)]
    cols += [Column("gap-decided", keep=40), Column("set s", keep=96), Column("lowest-cost plateau", "id", 91)]
    cols += [Column("95% interval", "id", 90)]
    cols += [Column("cost", keep=94), Column("auto as human", keep=60), Column("human as auto", keep=60)]
    cols += [Column("cost at 2 s", keep=93)]
    out: list[Block] = [
        Paragraph(
            f"Cost = {num(d['cost_auto_as_human'])} × automatic read as human + {num(d['cost_human_as_auto'])} × "
            f"human read as automatic, over the prompts (user-role records that start a request, tool results "
            f"left out: no threshold changes how the router decides a tool result). Interval: "
            f"{num(d['bootstrap'])} session resamples."
        ),
        Table(cols, rows),
        *(
            [Paragraph(note)]
            if (note := left_out_note(d.get("tool_results_left_out") or [], {r[0] for r in rows}))
            else []
        ),
        _cost_chart(d, report),
    ]
    alls = [c for c in d["curves"] if c["group"] == "all"]
    rows = []
    for t in CURVE_AT:
        pts = [next((p for p in c["points"] if abs(p["threshold"] - t) < 1e-9), None) for c in alls]
        rows.append([secs(t)] + [num(p["cost"]) if p else "–" for p in pts])
    cols = [Column("threshold s", keep=99)] + [Column(c["policy"]) for c in alls]
    out.append(Details("Cost at selected thresholds", [Table(cols, rows)]))
    return out + _variants(d)


def _cost_chart(d: dict[str, Any], report: dict[str, Any]) -> LineChart:
    series = {
        c["policy"]: [(p["threshold"], p["cost"]) for p in c["points"] if p["threshold"] <= 10 + 1e-9]
        for c in d["curves"]
        if c["group"] == "all"
    }
    marks = {
        f"set {r['policy']}": r["threshold"]
        for r in d["recommendations"]
        if r["group"] == "all"
        and r.get("threshold") is not None
        and r["policy"] != "labels"
        and r["threshold"] != report["options"]["threshold"]  # keeping the current value: its mark says it
    }
    marks["current"] = report["options"]["threshold"]
    return LineChart(
        "gap threshold (seconds, 0–10 shown)",
        "cost (weighted errors)",
        series,
        "Cost over the prompts the sweep scores, by threshold; the full curve to 30 s is in --format json.",
        marks,
    )


def _variants(d: dict[str, Any]) -> list[Block]:
    """The router's rule variants: errors each removes and adds against the router order."""
    if not d["variants"]:
        return []
    rows = []
    for v in d["variants"]:
        iv = v["interval"]
        at = [k for k in v if k.startswith("removed_at_")]
        rows.append(
            [
                v["policy"],
                v["group"],
                secs(v["threshold"]),
                f"{secs(iv[0])}–{secs(iv[1])}" if iv else "–",
                num(v["errors"]),
                num(v["removed"]),
                num(v["added"]),
                f"{num(v['router_errors'])} at {secs(v['router_threshold'])} s",
                "/".join(num(v[k]) for k in (at[0], at[0].replace("removed", "added"))) if at else "–",
            ]
        )
    ref = next((k[len("removed_at_") : -1] for k in d["variants"][0] if k.startswith("removed_at_")), "")
    cols = [Column("variant", "id", 99), Column("group", "id", 60), Column("best s", keep=90)]
    cols += [Column("95% interval", "id", 40), Column("errors", keep=95), Column("removed", keep=92)]
    cols += [Column("added", keep=92), Column("router errors", "id", 50), Column(f"removed/added at {ref} s", "id", 70)]
    title = "Rule variants against the router order"
    return [Details(title, [Table(cols, rows)])]  # its advice is the headline's "Rule change"


SECTION = Section("threshold", "Threshold", collect, blocks)
