"""Report section "Guard": what the live Stop-hook guard did (its log ingested as format stallscan_guard):
decisions by mode / verdict / reason with latency, and what followed each block (a tool call landed, a
final answer, the budget spent, blocked again, or a person writing within a minute: a likely false block).
collect() returns JSON-ready dicts (stable keys); blocks() lays them out; nothing here prints."""

from __future__ import annotations

from typing import Any, cast

import duckdb

from stallscan.report.blocks import Block, Column, Paragraph, Table
from stallscan.report.cells import num
from stallscan.report.section import ReportOptions, Section
from stallscan.store import sql

FALSE_BLOCK_WINDOW_S = 60
FOLLOWED_BY = ("tool_call", "final", "budget_spent", "blocked_again", "person_within_window", "unknown")


def _rows(cur: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    cols = [d[0] for d in cur.description]
    return [dict(zip(cols, r)) for r in cur.fetchall()]


def collect(con: duckdb.DuckDBPyConnection, opts: ReportOptions) -> dict[str, Any]:
    present = cast("tuple[bool]", sql.query(con, "report/guard_present").fetchall()[0])[0]  # (else: no guard row)
    summary = _rows(sql.query(con, "report/guard_summary")) if present else []
    after = _rows(sql.query(con, "report/guard_after_block", {"window": FALSE_BLOCK_WINDOW_S})) if present else []
    decisions: dict[str, int] = {}
    for r in summary:
        decisions[r["decision"]] = decisions.get(r["decision"], 0) + r["n"]
    followed = dict.fromkeys(FOLLOWED_BY, 0)
    for r in after:
        followed[r["followed_by"]] += 1
    return {
        "records": sum(r["n"] for r in summary),
        "decisions": decisions,
        "window_s": FALSE_BLOCK_WINDOW_S,
        "summary": [{k: (round(v, 2) if isinstance(v, float) else v) for k, v in r.items()} for r in summary],
        "after_block": followed,
        "blocks": [
            {**r, "ts": r["ts"].isoformat() if r["ts"] is not None else None, "event_id": r["event_id"]}
            for r in after[: opts.limit]
        ],
    }


def blocks(d: dict[str, Any], report: dict[str, Any], full: bool) -> list[Block]:
    """Short form: one line, none when no guard log was ingested."""
    if not d["records"]:
        return [Paragraph(NO_LOG)] if full else []
    if not full:
        parts = ", ".join(f"{n:,} {k}" for k, n in sorted(d["decisions"].items()))
        return [Paragraph(f"{d['records']:,} decisions ({parts})")]
    ms = ("latency_median_ms", "latency_max_ms")
    rows = [
        [*(num(r[k]) for k in ("mode", "decision", "verdict", "reason", "n", "sessions")), *(_ms(r[k]) for k in ms)]
        for r in d["summary"]
    ]
    cols = [Column(h, "id", 90 - i) for i, h in enumerate(("mode", "decision", "verdict", "reason"))]
    cols += [Column("n", keep=85), Column("sessions", keep=60), Column("median ms", keep=50), Column("max ms")]
    after = [[k, num(n)] for k, n in d["after_block"].items()]
    return [
        Table(cols, rows, "Guard decisions"),
        Table(
            [Column("followed by", "id", 99), Column("blocks")],
            after,
            f"After each block (a person within {d['window_s']} s = likely false block)",
        ),
    ]


NO_LOG = "no guard log ingested (stallscan guard install; then stallscan ingest <log>)"


def _ms(v: float | None) -> str:
    return "–" if v is None else f"{v:.1f}"


SECTION = Section("guard", "Guard", collect, blocks)
