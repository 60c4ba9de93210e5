"""Report section "Stalls": counts by kind and outcome, silent endings worst first, rates, recovery
curves, the retry-bound sweep and per-signature hits. collect() returns JSON-ready dicts (stable keys);
render() builds rich renderables; nothing here prints."""

from __future__ import annotations

from typing import Any

import duckdb
from rich.console import Group
from rich.table import Table
from rich.text import Text

from stallscan.replay.stall_data import measured_precision, precision_line
from stallscan.replay.stalls import (
    ReplayInfo,
    bound_sweep,
    list_stalls,
    recovery,
    replay_stalls,
    signature_hits,
    silent_rates,
    summary_counts,
)
from stallscan.report.registry import ReportOptions, Section, register

SWEEP_BOUNDS = [0, 1, 2, 3, 4, 5]


def _iso(v: Any) -> Any:
    return v.isoformat() if hasattr(v, "isoformat") else v


def collect(con: duckdb.DuckDBPyConnection, opts: ReportOptions) -> dict[str, Any]:
    if opts._replayed:  # given tables (report --from-parquet): the replay's own settings, from stall_replay_info
        r = con.execute(
            "SELECT retry_bound, narrated_bound, segmentation, data_version FROM stall_replay_info"
        ).fetchall()[0]
        info = ReplayInfo(r[0], r[1], r[2], r[3], 0, 0, 0)
    else:
        info = replay_stalls(con, retry_bound=opts.retry_bound)
    worst = list_stalls(con, outcome=["silent_plan_as_answer", "exhausted"], scoped=True, limit=opts.limit)
    worst = [{**{k: _iso(v) for k, v in r.items()}} for r in worst if r["delivered"]]
    bounds = sorted(set(SWEEP_BOUNDS + [opts.retry_bound]))
    return {
        "retry_bound": info.retry_bound,
        "narrated_bound": info.narrated_bound,
        "segmentation": info.segmentation,
        "data_version": info.data_version,
        "counts": summary_counts(con, scoped=True),
        "silent_endings": worst,
        "rates": silent_rates(con, scoped=True),
        "recovery": recovery(con, scoped=True),
        "bound_sweep": bound_sweep(con, bounds, scoped=True),
        "signatures": signature_hits(con, scoped=True),
        "precision": measured_precision(),
    }


def _one_line(s: str | None, n: int = 90) -> str:
    s = " ".join((s or "").split())
    return s if len(s) <= n else "…" + s[-(n - 1) :]


def render(data: dict[str, Any]) -> Group:
    parts: list[Any] = []
    t = Table(
        title=f"Stalls (retry bound {data['retry_bound']}, narrated bound {data['narrated_bound']}, "
        f"turns from {data['segmentation']})",
        title_justify="left",
    )
    for c in (
        "harness",
        "rounds",
        "tool",
        "final",
        "dropped",
        "no_tool",
        "narrated",
        "empty/trunc/fail",
        "silent",
        "exhausted",
        "recovered",
        "answered",
        "abandoned",
    ):
        t.add_column(c, justify="left" if c == "harness" else "right")
    for h, d in sorted(data["counts"].items()):
        rk, so = d.get("round_kind", {}), d.get("stall_outcome", {})
        t.add_row(
            h,
            str(sum(rk.values())),
            str(rk.get("tool_round", 0)),
            str(rk.get("final", 0)),
            str(rk.get("dropped_tool_call", 0)),
            str(rk.get("no_tool", 0)),
            str(rk.get("narrated_intent", 0)),
            str(sum(rk.get(k, 0) for k in ("empty", "truncated", "failed", "cancelled"))),
            str(so.get("silent_plan_as_answer", 0)),
            str(so.get("exhausted", 0)),
            str(so.get("recovered", 0)),
            str(so.get("answered", 0)),
            str(so.get("abandoned", 0)),
        )
    parts.append(t)
    parts.append(Text(precision_line(data.get("precision"))))
    w = Table(title="Plan-as-answer endings, worst first", title_justify="left")
    for c in ("outcome", "session", "time", "model", "kind / signature", "finish", "idx", "narration"):
        w.add_column(c)
    for r in data["silent_endings"]:
        w.add_row(
            "silent" if r["outcome"] == "silent_plan_as_answer" else r["outcome"],
            r["session_id"][:18],
            (r["ts"] or "-")[:19].replace("T", " ") + ("Z" if r["ts"] else ""),
            r["model"] or "-",
            f"{r['round_kind']} / {r['signature']}",
            r["finish_reason"] or "null",
            str(r["stall_index"]),
            _one_line(r["excerpt"]),
        )
    parts.append(w if data["silent_endings"] else Text("No plan-as-answer endings."))
    rt = Table(title="Silent endings per 1,000 turns", title_justify="left")
    for c in ("by", "key", "turns", "silent", "exhausted", "silent/1k", "plan/1k"):
        rt.add_column(c, justify="left" if c in ("by", "key") else "right")
    for dim in ("harness", "provider", "model"):
        for r in data["rates"][dim]:
            rt.add_row(
                dim,
                r["key"],
                str(r["turns"]),
                str(r["silent"]),
                str(r["exhausted"]),
                f"{r['silent_per_1000']:.1f}",
                f"{r['plan_endings_per_1000']:.1f}",
            )
    parts.append(rt)
    rc = Table(title="Recovery after the k-th nudge (episodes of consecutive stalls)", title_justify="left")
    for c in ("harness", "k", "reached", "recovered", "rate", "cum. share", "95% bound", "99% bound"):
        rc.add_column(c, justify="left" if c == "harness" else "right")
    for h, d in sorted(data["recovery"].items()):
        for p in d["curve"]:
            rc.add_row(
                h,
                str(p["nudges"]),
                str(p["reached"]),
                str(p["recovered_here"]),
                "-" if p["rate"] is None else f"{p['rate']:.0%}",
                "-" if p["cumulative_share"] is None else f"{p['cumulative_share']:.0%}",
                str(d["bound_95"]) if p["nudges"] == 0 else "",
                str(d["bound_99"]) if p["nudges"] == 0 else "",
            )
    parts.append(rc)
    bs = Table(title="Other retry bounds: endings that would change", title_justify="left")
    for c in ("bound", "re-prompted instead of a plan", "plan instead of a recovery", "plan endings logged"):
        bs.add_column(c, justify="right")
    for r in data["bound_sweep"]:
        bs.add_row(str(r["bound"]), str(r["would_reprompt"]), str(r["would_deliver"]), str(r["plan_endings"]))
    parts.append(bs)
    sg = Table(title="Signature hits (precision per signature)", title_justify="left")
    for c in ("signature", "kind", "matched", "decided", "vetoed", "outside window", "harness nudged"):
        sg.add_column(c, justify="left" if c in ("signature", "kind") else "right")
    for r in data["signatures"]:
        if r["matched"]:
            sg.add_row(
                r["id"],
                r["kind"],
                str(r["matched"]),
                str(r["decided"]),
                str(r["vetoed"]),
                str(r["outside_window"]),
                str(r["harness_nudged"]),
            )
    parts.append(sg)
    return Group(*parts)


register(Section("stalls", "Stalls", collect, render))
