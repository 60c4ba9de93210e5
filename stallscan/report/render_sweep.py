"""Renderables for the threshold sweep (terminal): recommendation table and a cost sparkline."""

from __future__ import annotations

from typing import Any

import numpy as np
from rich.console import Group

from stallscan.report.fit import Col, fit_table, width
from stallscan.sweep.core import SweepResult

BARS = "▁▂▃▄▅▆▇█"


def sparkline(values: np.ndarray, width: int = 60) -> str:
    v = np.asarray(values, float)
    if not len(v):
        return ""
    idx = np.linspace(0, len(v) - 1, min(width, len(v))).astype(int)
    v = v[idx]
    lo, hi = float(v.min()), float(v.max())
    if hi == lo:
        return BARS[0] * len(v)
    return "".join(BARS[int((x - lo) / (hi - lo) * (len(BARS) - 1))] for x in v)


def _plain(v: Any) -> Any:
    """numpy scalars and arrays, tuples and dicts as plain JSON values (so the view survives json round trips)."""
    if isinstance(v, dict):
        return {str(k): _plain(x) for k, x in v.items()}
    if isinstance(v, list | tuple | np.ndarray):
        return [_plain(x) for x in v]
    if isinstance(v, np.generic):
        return v.item()
    return v


def sweep_view(res: SweepResult) -> dict[str, Any]:
    """What the sweep renderables read, as plain JSON data (the report memoises it with the report data)."""
    return {
        "cost_auto_as_human": float(res.cost_auto_as_human),
        "cost_human_as_auto": float(res.cost_human_as_auto),
        "recommendations": _plain(list(res.recommendation.values())),
        "curves": [
            {
                "policy": c.policy,
                "group": c.group,
                "lo": float(c.thresholds[0]) if len(c.thresholds) else 0,
                "hi": float(c.thresholds[-1]) if len(c.thresholds) else 0,
                "cost": _plain(c.cost),
            }
            for c in res.curves
        ],
        "variants": _plain(res.variants),
        "rule_advice": res.rule_advice,
        "left_out": _plain(res.left_out),
    }


def sweep_renderable(view: dict[str, Any], population: str | None = None) -> Group:
    """The recommendation per policy (`stallscan sweep`; the report's threshold section has its own blocks).
    `view`: sweep_view(result)."""
    rows = []
    for rec in view["recommendations"]:
        if rec["policy"] == "labels":
            rows.append(
                [
                    "labels (ceiling)",
                    rec["group"],
                    f"{rec['n_events']:,}",
                    "-",
                    "-",
                    "-",
                    "-",
                    "0",
                    "0",
                    "0",
                    "-",
                    "-",
                    "-",
                ]
            )
            continue
        at2 = rec["at_2s"] or {}
        iv, pl = rec["interval"], rec.get("plateau")
        rows.append(
            [
                rec["policy"],
                rec["group"],
                f"{rec['n_events']:,}",
                f"{rec['n_gap_decided']:,}",
                f"{rec['threshold']:.2f}" if rec["threshold"] is not None else "-",
                f"{pl[0]:.2f}-{pl[1]:.2f}" if pl else "-",
                f"{iv[0]:.2f}-{iv[1]:.2f}" if iv else "-",
                f"{rec['cost']:g}" if rec["cost"] is not None else "-",
                str(rec["auto_as_human"]),
                str(rec["human_as_auto"]),
                f"{at2['cost']:g}" if at2 else "-",
                str(at2.get("auto_as_human", "-")),
                str(at2.get("human_as_auto", "-")),
            ]
        )
    cols = [
        Col("policy", "id", 99),
        Col("group", "id", 97),
        Col("prompts", keep=70),
        Col("by gap", keep=40),
        Col("set s", keep=96),
        Col("lowest-cost plateau", "id", 91),
        Col("95% interval", "id", 90),
        Col("cost", keep=94),
        Col("a→h", keep=60),
        Col("h→a", keep=60),
        Col("cost @2s", keep=93),
        Col("a→h @2s", keep=55),
        Col("h→a @2s", keep=55),
    ]
    title = (
        f"Threshold sweep (cost = {view['cost_auto_as_human']:g} x auto-as-human (a→h) + "
        f"{view['cost_human_as_auto']:g} x human-as-auto (h→a))"
    )
    parts: list[Any] = [fit_table(cols, rows, title=title)]
    note = left_out_note(view.get("left_out") or [], {r[0] for r in rows})
    if note:
        parts.append(note)
    parts.append(
        population
        or "prompts = user-role records that start a request, tool results left out (no threshold changes how "
        "the router decides a tool result); by gap = how many of them the gap rule decides."
    )
    fallback = sum(r.get("by_fallback") or 0 for r in view["recommendations"] if r["policy"] == "labels")
    parts.append(
        f"labels (ceiling): the marker-based truth, no errors by construction; {fallback:,} of its events "
        "are human by default (no automatic-prompt marker matched), so it is only as good as the library."
    )
    for c in view["curves"]:
        lo, hi = c["lo"], c["hi"]
        label = f"{c['policy']} {c['group']} cost {lo:g}s "
        parts.append(f"{label}{sparkline(c['cost'], max(10, min(60, width() - len(label) - 8)))} {hi:g}s")
    if view["variants"]:
        parts.append(variants_renderable(view))
    return Group(*parts)


def left_out_note(rows: list[dict[str, Any]], shown: set[str]) -> str | None:
    """Under a table with the gap-only row: the tool results its cost leaves out, and what it (and the
    router) would misread among them at the replayed threshold (`rows`: SweepResult.left_out)."""
    if "gap-only" not in shown or not rows or not sum(r["tool_results"] for r in rows):
        return None
    n = sum(r["tool_results"] for r in rows)
    g = sum(r["gap-only"]["misread"] for r in rows)
    gc = sum(r["gap-only"]["cost"] for r in rows)
    rm = sum(r["router"]["misread"] for r in rows)
    rc = sum(r["router"]["cost"] for r in rows)
    thr = rows[0]["threshold"]
    return (
        f"gap-only looks cheaper only because no row counts the {n:,} tool results: at {thr:g} s gap-only "
        f"misreads {g:,} of them (cost +{gc:g}), the router {rm:,} (+{rc:g})."
    )


def variants_renderable(view: dict[str, Any]) -> Group:
    """The rule variants against the router order: errors removed / added, recommended threshold each."""
    ref = view["variants"][0]["at_reference"]["threshold"]
    rows = []
    for v in view["variants"]:
        iv, r = v["interval"], v["at_reference"]
        rows.append(
            [
                v["policy"],
                v["group"],
                f"{v['threshold']:.2f}",
                f"{iv[0]:.2f}-{iv[1]:.2f}" if iv else "-",
                str(v["errors"]),
                str(v["removed"]),
                str(v["added"]),
                f"{v['router_errors']} @{v['router_threshold']:.2f}s",
                f"{r['removed']}/{r['added']}",
            ]
        )
    cols = [
        Col("variant", "id", 99),
        Col("group", "id", 60),
        Col("best s", keep=90),
        Col("95% interval", "id", 40),
        Col("errors", keep=95),
        Col("removed", keep=92),
        Col("added", keep=92),
        Col("router errors", "id", 50),
        Col(f"rem/add @{ref:g}s", "id", 70),
    ]
    title = (
        "Rule variants vs the router order (errors at each one's recommended threshold, and at "
        f"{ref:g} s: the rule change alone)"
    )
    return Group(fit_table(cols, rows, title=title), view["rule_advice"] or "")
