"""Renderables for the threshold sweep (terminal): recommendation table and a cost sparkline."""

from __future__ import annotations

import numpy as np
from rich.console import Group, RenderableType
from rich.table import Table

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


def sweep_renderable(res: SweepResult) -> Group:
    t = Table(
        title=f"Threshold sweep (cost = {res.cost_auto_as_human:g} x auto-as-human + "
        f"{res.cost_human_as_auto:g} x human-as-auto)",
        title_justify="left",
    )
    for c in (
        "policy",
        "group",
        "events",
        "gap-decided",
        "best s",
        "95% interval",
        "cost",
        "auto→human",
        "human→auto",
        "cost @2s",
        "auto→human @2s",
        "human→auto @2s",
    ):
        t.add_column(c, justify="left" if c in ("policy", "group", "95% interval") else "right")
    for rec in res.recommendation.values():
        if rec["policy"] == "labels":
            t.add_row(
                "labels (ceiling)", rec["group"], f"{rec['n_events']:,}", "-", "-", "-", "0", "0", "0", "-", "-", "-"
            )
            continue
        at2 = rec["at_2s"] or {}
        iv = rec["interval"]
        t.add_row(
            rec["policy"],
            rec["group"],
            f"{rec['n_events']:,}",
            f"{rec['n_gap_decided']:,}",
            f"{rec['threshold']:.2f}" if rec["threshold"] is not None else "-",
            f"{iv[0]:.2f}–{iv[1]:.2f}" if iv else "-",
            f"{rec['cost']:g}" if rec["cost"] is not None else "-",
            str(rec["auto_as_human"]),
            str(rec["human_as_auto"]),
            f"{at2.get('cost', float('nan')):g}" if at2 else "-",
            str(at2.get("auto_as_human", "-")),
            str(at2.get("human_as_auto", "-")),
        )
    parts: list[RenderableType] = [t]
    fallback = sum(r.get("by_fallback") or 0 for r in res.recommendation.values() if r["policy"] == "labels")
    parts.append(
        f"labels (ceiling): the marker-based truth, no errors by construction; {fallback:,} of its events "
        "are human by default (no automatic-prompt marker matched), so it is only as good as the library."
    )
    for curve in res.curves:
        lo, hi = (float(curve.thresholds[0]), float(curve.thresholds[-1])) if len(curve.thresholds) else (0, 0)
        parts.append(f"{curve.policy:19} {curve.group:14} cost {lo:g}s {sparkline(curve.cost)} {hi:g}s")
    if res.variants:
        parts.append(variants_renderable(res))
    return Group(*parts)


def variants_renderable(res: SweepResult) -> Group:
    """The rule variants against the router order: errors removed / added, recommended threshold each."""
    ref = res.variants[0]["at_reference"]["threshold"]
    t = Table(
        title="Rule variants vs the router order (errors at each one's recommended threshold, and at "
        f"{ref:g} s: the rule change alone)",
        title_justify="left",
    )
    for c in ("variant", "group", "best s", "95% interval", "errors", "removed", "added", "router errors"):
        t.add_column(c, justify="left" if c in ("variant", "group", "95% interval") else "right")
    t.add_column(f"removed/added @{ref:g}s", justify="right")
    for v in res.variants:
        iv, r = v["interval"], v["at_reference"]
        t.add_row(
            v["policy"],
            v["group"],
            f"{v['threshold']:.2f}",
            f"{iv[0]:.2f}–{iv[1]:.2f}" if iv else "-",
            str(v["errors"]),
            str(v["removed"]),
            str(v["added"]),
            f"{v['router_errors']} @{v['router_threshold']:.2f}s",
            f"{r['removed']}/{r['added']}",
        )
    return Group(t, res.rule_advice or "")
