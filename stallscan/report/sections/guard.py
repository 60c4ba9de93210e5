"""Report section "Guard": what the live Stop-hook guard did (its log ingested as format stallscan_guard):
decisions by mode / verdict / reason with latency, and what followed each block (a tool call landed, a
final answer, the budget spent, blocked again, or a person writing within a minute: a likely false block).
collect() returns JSON-ready dicts (stable keys); render() builds rich renderables; nothing here prints."""

from __future__ import annotations

from typing import Any

import duckdb
from rich.console import Group
from rich.table import Table
from rich.text import Text

from stallscan.report.section import ReportOptions, Section
from stallscan.store import sql

FALSE_BLOCK_WINDOW_S = 60
FOLLOWED_BY = ("tool_call", "final", "budget_spent", "blocked_again", "person_within_window", "unknown")


def _rows(cur: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    cols = [d[0] for d in cur.description]
    return [dict(zip(cols, r)) for r in cur.fetchall()]


def collect(con: duckdb.DuckDBPyConnection, opts: ReportOptions) -> dict[str, Any]:
    summary = _rows(sql.query(con, "report/guard_summary"))
    after = _rows(sql.query(con, "report/guard_after_block", {"window": FALSE_BLOCK_WINDOW_S}))
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


def render(data: dict[str, Any]) -> Group:
    title = Text("Guard", style="bold")
    if not data["records"]:
        return Group(title, Text("no guard log ingested (stallscan guard install; then stallscan ingest <log>)"))
    t = Table(title="guard decisions", title_justify="left")
    for col in ("mode", "decision", "verdict", "reason", "n", "sessions", "median ms", "max ms"):
        t.add_column(col, justify="right" if col in ("n", "sessions", "median ms", "max ms") else "left")
    for r in data["summary"]:
        t.add_row(
            str(r["mode"]),
            str(r["decision"]),
            str(r["verdict"]),
            str(r["reason"]),
            str(r["n"]),
            str(r["sessions"]),
            "" if r["latency_median_ms"] is None else f"{r['latency_median_ms']:.1f}",
            "" if r["latency_max_ms"] is None else f"{r['latency_max_ms']:.1f}",
        )
    a = Table(
        title=f"after each block (a person within {data['window_s']} s = likely false block)", title_justify="left"
    )
    a.add_column("followed by")
    a.add_column("blocks", justify="right")
    for k, n in data["after_block"].items():
        a.add_row(k, str(n))
    return Group(title, t, a)


def summary(data: dict[str, Any]) -> str | None:
    """One line for the default report; nothing when no guard log was ingested."""
    if not data["records"]:
        return None
    d = data["decisions"]
    parts = ", ".join(f"{n:,} {k}" for k, n in sorted(d.items()))
    return f"[bold]Guard[/]: {data['records']:,} decisions ({parts}); details: stallscan report --section guard"


SECTION = Section("guard", "Guard", collect, render, summary)
