"""The reference walk against the SQL tables: where stallscan/replay/stalls_ref.py and the production replay
(queries/replay/stall_*.sql) differ on rounds, stalls and turns (used by the tests; kept apart from the walk,
which the live guard imports at start-up)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from stallscan.replay.stall_rules import NARRATED_BOUND, RETRY_BOUND, load
from stallscan.replay.stalls_ref import turn_starts_fallback, walk

if TYPE_CHECKING:
    import duckdb

ROUND_COLS = (
    "turn_id",
    "round_in_turn",
    "round_kind",
    "signature",
    "after_tool_round",
    "sig_hits",
    "veto_hits",
    "wait_hits",
    "vetoed",
    "background",
    "approval_mode",
    "nudge_id",
    "n_nudges",
    "interrupted",
    "provider",
)
STALL_COLS = (
    "turn_id",
    "round_kind",
    "signature",
    "stall_index",
    "would_do",
    "nudged",
    "nudge_id",
    "episode",
    "episode_nudges",
    "delivered",
    "outcome",
)
TURN_COLS = (
    "start_event_id",
    "n_rounds",
    "n_tool_calls",
    "n_stalls",
    "delivered_event_id",
    "delivered_round_kind",
    "outcome",
)


def _fetch(con: duckdb.DuckDBPyConnection, query: str, params: list[Any] | None = None) -> list[dict[str, Any]]:
    cur = con.execute(query, params or [])
    cols = [d[0] for d in cur.description]
    return [dict(zip(cols, r)) for r in cur.fetchall()]


def disagreements(
    con: duckdb.DuckDBPyConnection,
    retry_bound: int = RETRY_BOUND,
    narrated_bound: int = NARRATED_BOUND,
    check_fallback_starts: bool = True,
    limit: int = 20,
) -> list[str]:
    """Walk every session of `events` in Python and list where it differs from rounds / stalls / turns
    (as left by the last replay_stalls). Empty list = agreement."""
    data = load()
    problems: list[str] = []
    info = _fetch(con, "SELECT segmentation FROM stall_replay_info")[0]
    events = _fetch(con, "SELECT * FROM events ORDER BY session_id, seq, event_id")
    sessions: dict[str, list[dict[str, Any]]] = {}
    for ev in events:
        sessions.setdefault(ev["session_id"], []).append(ev)
    sql_rounds = {r["event_id"]: r for r in _fetch(con, "SELECT * FROM rounds")}
    sql_stalls = {r["event_id"]: r for r in _fetch(con, "SELECT * FROM stalls")}
    sql_turns = {(r["session_id"], r["turn_id"]): r for r in _fetch(con, "SELECT * FROM turns")}
    starts_by_session: dict[str, set[str]] = {}
    for (sid, _), t in sql_turns.items():
        if t["start_event_id"] is not None:
            starts_by_session.setdefault(sid, set()).add(t["start_event_id"])
    seen_rounds: set[Any] = set()
    seen_stalls: set[Any] = set()
    seen_turns: set[Any] = set()
    for sid, evs in sessions.items():
        starts = starts_by_session.get(sid, set())
        if check_fallback_starts and info["segmentation"] == "fallback":
            mine = turn_starts_fallback(evs, data)
            if mine != starts:
                problems.append(
                    f"{sid}: turn starts differ: python-only {sorted(mine - starts)[:3]}, "
                    f"sql-only {sorted(starts - mine)[:3]}"
                )
        res = walk(evs, starts, retry_bound, narrated_bound, data)
        for kind, mine_rows, theirs, cols, key in (
            ("round", res["rounds"], sql_rounds, ROUND_COLS, lambda r: r["event_id"]),
            ("stall", res["stalls"], sql_stalls, STALL_COLS, lambda r: r["event_id"]),
            ("turn", res["turns"], sql_turns, TURN_COLS, lambda r: (r["session_id"], r["turn_id"])),
        ):
            seen = {"round": seen_rounds, "stall": seen_stalls, "turn": seen_turns}[kind]
            for row in mine_rows:
                k = key(row)
                seen.add(k)
                other = theirs.get(k)
                if other is None:
                    problems.append(f"{sid}: {kind} {k} only in the reference walk")
                    continue
                for c in cols:
                    a, b = row.get(c), other.get(c)
                    if isinstance(b, tuple):
                        b = list(b)
                    if a != b:
                        problems.append(f"{sid}: {kind} {k} {c}: python {a!r} != sql {b!r}")
    for kind, theirs, seen in (
        ("round", sql_rounds, seen_rounds),
        ("stall", sql_stalls, seen_stalls),
        ("turn", sql_turns, seen_turns),
    ):
        for k in theirs.keys() - seen:
            problems.append(f"{kind} {k} only in SQL")
    return problems[:limit] if limit else problems
