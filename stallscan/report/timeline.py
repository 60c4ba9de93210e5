"""`stallscan show SESSION`: one session's timeline, misclassified turns and stalls highlighted."""

from __future__ import annotations

from typing import Any, cast

import duckdb
from rich.table import Table
from rich.text import Text

from stallscan.store import sql
from stallscan.store.errors import StallscanError


def resolve_session(con: duckdb.DuckDBPyConnection, session: str) -> str:
    """An exact session id, or a unique prefix of one."""
    rows = con.execute(
        "SELECT DISTINCT session_id FROM events WHERE starts_with(session_id, ?) ORDER BY 1 LIMIT 6", [session]
    ).fetchall()
    exact = [r[0] for r in rows if r[0] == session]
    if exact:
        return cast(str, exact[0])
    if not rows:
        raise StallscanError(f"no session {session!r}", hint='list them: stallscan sql "SELECT * FROM sessions"')
    if len(rows) > 1:
        raise StallscanError(
            f"{session!r} matches several sessions: " + ", ".join(r[0] for r in rows[:5]), hint="give more of the id"
        )
    return cast(str, rows[0][0])


def timeline(
    con: duckdb.DuckDBPyConnection, session: str, threshold: float = 2.0, retry_bound: int = 3
) -> tuple[str, list[dict[str, Any]]]:
    """(session id, rows) with labels, boundary decisions and stall replay computed if missing."""
    from stallscan.replay.boundaries import replay_boundaries
    from stallscan.replay.labels import label_events
    from stallscan.replay.stalls import replay_stalls

    sid = resolve_session(con, session)
    label_events(con)
    replay_boundaries(con, threshold)
    replay_stalls(con, retry_bound=retry_bound)
    cur = sql.query(con, "report/session_timeline", {"session": sid})
    cols = [d[0] for d in cur.description]
    rows = [dict(zip(cols, r)) for r in cur.fetchall()]
    for r in rows:
        r["ts"] = r["ts"].isoformat() if r["ts"] is not None else None
        r["gap_s"] = round(r["gap_s"], 3) if r["gap_s"] is not None else None
    return sid, rows


def timeline_table(sid: str, rows: list[dict[str, Any]]) -> Table:
    t = Table(title=f"session {sid}", title_justify="left", show_lines=False)
    widths = {
        "seq": 3,
        "line": 4,
        "time (UTC)": 18,
        "gap s": 7,
        "role": 9,
        "origin / round": 17,
        "decision": 19,
        "flag": 22,
    }
    for c, w in widths.items():
        t.add_column(c, justify="right" if c in ("seq", "line", "gap s") else "left", no_wrap=True, min_width=w)
    t.add_column("text", no_wrap=True, overflow="ellipsis", max_width=60)
    for r in rows:
        flag, style = "", None
        if r["error"] in ("auto_as_human", "human_as_auto"):
            flag, style = r["error"], "bold red"
        if r["stall_outcome"]:
            flag = (flag + " " if flag else "") + f"stall {r['stall_index']}: {r['stall_outcome']}"
            style = "bold red" if r["stall_outcome"] == "silent_plan_as_answer" else (style or "yellow")
        who = r["origin"] or r["round_kind"] or r["kind"]
        if r["role"] == "assistant" and r["n_tool_calls"]:
            who = f"{who} ({r['n_tool_calls']} call{'s' if r['n_tool_calls'] > 1 else ''})"
        decision = f"{r['decision']} ({r['decided_by']})" if r["decision"] else ""
        t.add_row(
            str(r["seq"]),
            str(r["line"]),
            (r["ts"] or "-")[5:23].replace("T", " "),
            "" if r["gap_s"] is None else f"{r['gap_s']:.3f}",
            r["role"],
            who,
            decision,
            Text(flag, style=cast(str, style)) if flag else "",  # a flag always comes with its style
            r["excerpt"] or "",
            style=None,
        )
    return t
