"""Report section "Corpus": what was ingested, per harness, and what was skipped or rejected."""

from __future__ import annotations

from typing import Any, cast

import duckdb
from rich.console import Group, RenderableType
from rich.table import Table

from stallscan.report.registry import ReportOptions, Section, register
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
    pending = cast("tuple[int]", con.execute("SELECT count(*) FROM files WHERE pending_bytes > 0").fetchone())[0]
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
    }


def render(data: dict[str, Any]) -> Group:
    t = Table(title="Corpus", title_justify="left")
    for c in ("harness", "files", "sessions", "events", "user msgs", "replies", "tool calls", "from", "to"):
        t.add_column(c, justify="left" if c in ("harness", "from", "to") else "right")
    for h in data["by_harness"]:
        t.add_row(
            h["harness"],
            f"{h['files']:,}",
            f"{h['sessions']:,}",
            f"{h['events']:,}",
            f"{h['user_messages']:,}",
            f"{h['replies']:,}",
            f"{h['tool_calls']:,}",
            _day(h["first_ts"]),
            _day(h["last_ts"]),
        )
    tot = data["totals"]
    t.add_row(
        "total",
        f"{tot['files']:,}",
        f"{tot['sessions']:,}",
        f"{tot['events']:,}",
        f"{tot['user_messages']:,}",
        f"{tot['replies']:,}",
        f"{tot['tool_calls']:,}",
        "",
        "",
        style="bold",
    )
    parts: list[RenderableType] = [t]
    status = ", ".join(f"{k} {v:,}" for k, v in data["files_by_status"].items())
    rej = sum(r["lines"] for r in data["rejects"])
    parts.append(
        f"files: {status}; skipped lines {sum(data['skipped'].values()):,}; rejected lines {rej:,}"
        + (
            f"; {data['pending_truncated_lines']} truncated last line(s) pending"
            if data["pending_truncated_lines"]
            else ""
        )
    )
    for r in data["rejects"][:5]:
        parts.append(f"  reject: {r['reason']} x{r['lines']:,}")
    return Group(*parts)


def _day(iso: str | None) -> str:
    return iso[:16].replace("T", " ") + "Z" if iso else "-"


register(Section("corpus", "Corpus", collect, render))
