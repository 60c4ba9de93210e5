"""Report section "Corpus": what was ingested, per harness, and what was skipped or rejected."""

from __future__ import annotations

from typing import Any

import duckdb
from rich.console import Group
from rich.text import Text

from stallscan.report.fit import Col, fit_table
from stallscan.report.render import unknown_shape_line
from stallscan.report.section import ReportOptions, Section
from stallscan.store import sql


def collect(con: duckdb.DuckDBPyConnection, opts: ReportOptions) -> dict[str, Any]:
    cur = sql.query(con, "report/corpus_summary")
    cols = [d[0] for d in cur.description]
    harnesses = [dict(zip(cols, r)) for r in cur.fetchall()]
    for h in harnesses:
        for k in ("first_ts", "last_ts"):
            h[k] = h[k].isoformat() if h[k] is not None else None
    files = dict(
        con.execute("SELECT coalesce(status, 'unknown'), count(*) FROM files GROUP BY ALL ORDER BY 1").fetchall()
    )
    rejects = [
        {"reason": r, "lines": n}
        for r, n in con.execute("SELECT reason, count(*) FROM rejects GROUP BY ALL ORDER BY 2 DESC, 1").fetchall()
    ]
    skipped = dict(con.execute("SELECT kind, count(*) FROM skipped GROUP BY ALL ORDER BY 2 DESC, 1").fetchall())
    cur = sql.query(con, "report/unknown_shapes")
    shape_cols = [d[0] for d in cur.description]
    unknown_shapes = [dict(zip(shape_cols, r)) for r in cur.fetchall()]
    row = con.execute("SELECT count(*) FROM files WHERE pending_bytes > 0").fetchone()
    pending = row[0] if row else 0
    totals = {
        k: sum(h[k] or 0 for h in harnesses)
        for k in ("files", "sessions", "events", "user_messages", "replies", "tool_calls")
    }
    return {
        "totals": totals,
        "by_harness": harnesses,
        "files_by_status": files,
        "rejects": rejects,
        "skipped": skipped,
        "pending_truncated_lines": pending,
        # drift: records of a known format in a shape its reader does not know (format, version, shape)
        "unknown_shapes": unknown_shapes,
    }


def _rows(data: dict[str, Any]) -> list[list[Any]]:
    rows = [
        [
            h["harness"],
            _c(h["files"]),
            _c(h["sessions"]),
            _c(h["events"]),
            _c(h["user_messages"]),
            _c(h["replies"]),
            _c(h["tool_calls"]),
            _day(h["first_ts"]),
            _day(h["last_ts"]),
        ]
        for h in data["by_harness"]
    ]
    tot = data["totals"]
    rows.append(
        [
            "total",
            _c(tot["files"]),
            _c(tot["sessions"]),
            _c(tot["events"]),
            _c(tot["user_messages"]),
            _c(tot["replies"]),
            _c(tot["tool_calls"]),
            "",
            "",
        ]
    )
    return rows


COLS = [
    Col("harness", "id", 99),
    Col("files", keep=40),
    Col("sessions", keep=90),
    Col("events", keep=85),
    Col("user msgs", keep=70),
    Col("replies", keep=60),
    Col("tool calls", keep=50),
    Col("from", "id", 30),
    Col("to", "id", 35),
]


def _line(data: dict[str, Any]) -> str:
    status = ", ".join(f"{k} {v:,}" for k, v in data["files_by_status"].items())
    rej = sum(r["lines"] for r in data["rejects"])
    return (
        f"files: {status}; skipped lines {sum(data['skipped'].values()):,} ({len(data['skipped'])} kinds); "
        f"rejected lines {rej:,}"
        + (
            f"; {data['pending_truncated_lines']} truncated last line(s) pending"
            if data["pending_truncated_lines"]
            else ""
        )
    )


SUMMARY_HARNESSES = 4  # the summary names the largest harnesses; --section corpus (or --full) lists every one


def summary(data: dict[str, Any]) -> Group:
    tot = data["totals"]
    hs = sorted(data["by_harness"], key=lambda h: -(h["sessions"] or 0))
    first = min((h["first_ts"] for h in hs if h["first_ts"]), default=None)
    last = max((h["last_ts"] for h in hs if h["last_ts"]), default=None)
    return Group(
        Text("Corpus", style="bold"),
        f"{_c(tot['sessions'])} sessions, {_c(tot['events'])} events, {_c(tot['files'])} files"
        + (f", {_day(first)} to {_day(last)}" if first else "")
        + "; sessions by harness: "
        + ", ".join(f"{h['harness']} {_c(h['sessions'])}" for h in hs[:SUMMARY_HARNESSES])
        + (f" and {len(hs) - SUMMARY_HARNESSES} more" if len(hs) > SUMMARY_HARNESSES else ""),
        _line(data),
        *[Text(unknown_shape_line(u), style="yellow") for u in data.get("unknown_shapes", [])],
    )


def render(data: dict[str, Any]) -> Group:
    rows = _rows(data)
    parts = [fit_table(COLS, rows, title="Corpus", styles=[None] * (len(rows) - 1) + ["bold"]), _line(data)]
    parts += [Text(unknown_shape_line(u), style="yellow") for u in data.get("unknown_shapes", [])]
    parts += [Text(f"unreadable: {u['path']} ({u['why']})", style="red") for u in data.get("unreadable", [])]
    for r in data["rejects"][:5]:
        parts.append(f"  reject: {r['reason']} x{r['lines']:,}")
    if data["skipped"]:
        parts.append(
            fit_table(
                [Col("skipped kind", "text", 99, min=20, max=50), Col("lines")],
                [[k, _c(v)] for k, v in data["skipped"].items()],
                title="Skipped lines by kind (not events: metadata, progress, snapshots)",
            )
        )
    return Group(*parts)


def _c(n: int | None) -> str:
    return f"{n or 0:,}"


def _day(iso: str | None) -> str:
    return iso[:10] if iso else "-"


SECTION = Section("corpus", "Corpus", collect, render, summary)
