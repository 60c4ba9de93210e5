"""Report section "Stalls": counts by kind and outcome, silent endings worst first, rates, recovery
curves, the retry-bound sweep and per-signature hits. collect() returns JSON-ready dicts (stable keys);
render() builds rich renderables; nothing here prints."""

from __future__ import annotations

from typing import Any

import duckdb
from rich.console import Group
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
from stallscan.report.fit import Col, fit_table
from stallscan.report.section import ReportOptions, Section
from stallscan.report.timeline import session_refs

SWEEP_BOUNDS = [0, 1, 2, 3, 4, 5]


def _iso(v: Any) -> Any:
    return v.isoformat() if hasattr(v, "isoformat") else v


def collect(con: duckdb.DuckDBPyConnection, opts: ReportOptions) -> dict[str, Any]:
    if opts._replayed:  # given tables (report --from-parquet): the replay's own settings, from stall_replay_info
        row = con.execute(
            "SELECT retry_bound, narrated_bound, segmentation, data_version FROM stall_replay_info"
        ).fetchall()[0]
        info = ReplayInfo(row[0], row[1], row[2], row[3], 0, 0, 0)
    else:
        info = replay_stalls(con, retry_bound=opts.retry_bound, config=opts._config)
    worst = list_stalls(con, outcome=["silent_plan_as_answer", "exhausted"], scoped=True, limit=opts.limit)
    worst = [{**{k: _iso(v) for k, v in r.items()}} for r in worst if r["delivered"]]
    refs = session_refs(con, [r["session_id"] for r in worst])
    for r in worst:
        r["ref"] = refs[r["session_id"]]
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


def _counts_rows(data: dict[str, Any]) -> list[list[Any]]:
    rows = []
    turns = {r["key"]: r["turns"] for r in data["rates"]["harness"]}
    for h, d in sorted(data["counts"].items()):
        rk, so = d.get("round_kind", {}), d.get("stall_outcome", {})
        rows.append(
            [
                h,
                str(turns.get(h, 0)),
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
            ]
        )
    return rows


COUNT_COLS = [
    Col("harness", "id", 99),
    Col("turns", keep=90),
    Col("rounds", keep=60),
    Col("tool", keep=30),
    Col("final", keep=30),
    Col("dropped", keep=55),
    Col("no tool", keep=55),
    Col("narrated", keep=55),
    Col("other", keep=20),
    Col("silent", keep=95),
    Col("exhausted", keep=92),
    Col("recovered", keep=80),
    Col("answered", keep=40),
    Col("abandoned", keep=45),
]


def _title(data: dict[str, Any]) -> str:
    return (
        f"Stalls (retry bound {data['retry_bound']}, narrated bound {data['narrated_bound']}, "
        f"turns from {data['segmentation']})"
    )


def summary(data: dict[str, Any]) -> Group:
    keep = ("harness", "turns", "dropped", "no tool", "narrated", "silent", "exhausted")
    idx = [i for i, c in enumerate(COUNT_COLS) if c.header in keep]
    stall_cols = [i for i, c in enumerate(COUNT_COLS) if c.header in keep[2:]]
    all_rows = _counts_rows(data)
    rows = [[r[i] for i in idx] for r in all_rows if any(r[i] != "0" for i in stall_cols)]
    quiet = [r for r in all_rows if all(r[i] == "0" for i in stall_cols)]
    parts: list[Any] = [fit_table([COUNT_COLS[i] for i in idx], rows, title=_title(data))] if rows else []
    if quiet:
        turns = sum(int(r[1]) for r in quiet)
        parts.append(f"no stall in {len(quiet)} other harness(es) ({turns:,} turns): " + ", ".join(r[0] for r in quiet))
    return Group(*parts)


def render(data: dict[str, Any]) -> Group:
    parts: list[Any] = [
        fit_table(COUNT_COLS, _counts_rows(data), title=_title(data)),
        Text(precision_line(data.get("precision"))),
    ]
    rows = [
        [
            "silent" if r["outcome"] == "silent_plan_as_answer" else r["outcome"],
            r.get("ref") or r["session_id"],
            (r["ts"] or "-")[:16].replace("T", " "),
            r["model"] or "-",
            f"{r['round_kind']} / {r['signature']}",
            r["finish_reason"] or "null",
            str(r["stall_index"]),
            _one_line(r["excerpt"]),
        ]
        for r in data["silent_endings"]
    ]
    parts.append(
        fit_table(
            [
                Col("outcome", "id", 95),
                Col("session", "id", 96),
                Col("time (UTC)", "id", 30),
                Col("model", "text", 40, min=8, max=24),
                Col("kind / signature", "text", 50, min=10, max=36),
                Col("finish", "id", 35),
                Col("idx", keep=60),
                Col("narration", "text", 70, min=16, max=60),
            ],
            rows,
            title="Plan-as-answer endings, worst first (open one: stallscan show SESSION)",
        )
        if rows
        else Text("No plan-as-answer endings.")
    )
    rows = [
        [
            dim,
            r["key"],
            _c(r["turns"]),
            _c(r["silent"]),
            _c(r["exhausted"]),
            f"{r['silent_per_1000']:.1f}",
            f"{r['plan_endings_per_1000']:.1f}",
        ]
        for dim in ("harness", "provider", "model")
        for r in data["rates"][dim]
    ]
    parts.append(
        fit_table(
            [
                Col("by", "id", 90),
                Col("key", "text", 95, min=12, max=34),
                Col("turns", keep=90),
                Col("silent", keep=90),
                Col("exhausted", keep=80),
                Col("silent/1k", keep=85),
                Col("plan/1k", keep=60),
            ],
            rows,
            title="Silent endings per 1,000 turns",
        )
    )
    rows = []
    for h, d in sorted(data["recovery"].items()):
        for p in d["curve"]:
            rows.append(
                [
                    h,
                    str(p["nudges"]),
                    str(p["reached"]),
                    str(p["recovered_here"]),
                    "-" if p["rate"] is None else f"{p['rate']:.0%}",
                    "-" if p["cumulative_share"] is None else f"{p['cumulative_share']:.0%}",
                    _bound(d["bound_95"]) if p["nudges"] == 0 else "",
                    _bound(d["bound_99"]) if p["nudges"] == 0 else "",
                ]
            )
    parts.append(
        fit_table(
            [
                Col("harness", "id", 99),
                Col("k", keep=95),
                Col("reached", keep=80),
                Col("recovered", keep=80),
                Col("rate", keep=70),
                Col("cum. share", keep=75),
                Col("95% bound", keep=50),
                Col("99% bound", keep=40),
            ],
            rows,
            title="Recovery after the k-th nudge (episodes of consecutive stalls)",
        )
    )
    rows = [
        [str(r["bound"]), _c(r["would_reprompt"]), _c(r["would_deliver"]), _c(r["plan_endings"])]
        for r in data["bound_sweep"]
    ]
    parts.append(
        fit_table(
            [Col("bound", keep=99), Col("re-prompted, not a plan"), Col("plan, not a recovery"), Col("plans logged")],
            rows,
            title="Other retry bounds: endings that would change",
        )
    )
    rows = [
        [
            r["id"],
            r["kind"],
            _c(r["matched"]),
            _c(r["decided"]),
            _c(r["vetoed"]),
            _c(r["outside_window"]),
            _c(r["harness_nudged"]),
        ]
        for r in data["signatures"]
        if r["matched"]
    ]
    parts.append(
        fit_table(
            [
                Col("signature", "text", 99, min=14, max=36),
                Col("kind", "id", 60),
                Col("matched", keep=90),
                Col("decided", keep=85),
                Col("vetoed", keep=70),
                Col("outside", keep=40),
                Col("nudged", keep=45),
            ],
            rows,
            title="Signature hits (precision per signature)",
        )
    )
    return Group(*parts)


def _bound(v: int | None) -> str:
    return "none" if v is None else str(v)


def _c(n: int) -> str:
    return f"{n:,}"


SECTION = Section("stalls", "Stalls", collect, render, summary)
