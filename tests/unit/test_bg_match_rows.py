"""The [[background]] entries matched in one statement over the (call, entry) pairs
(queries/replay/stall_background_match_rows.sql, a replay of a handful of tool calls) give the rows the one statement
per entry gives (queries/replay/stall_background_match.sql), and what Python's own regexes give."""

from __future__ import annotations

import re

import duckdb

from stallscan.replay import stall_data
from stallscan.store import sql

NAMES = ["Bash", "bash", "BASH", "Task", "Agent", "terminal", "write_stdin", "Read", "exec_command", "", "Bashx"]
ARGUMENTS = [
    "",
    '{"command": "npm test", "run_in_background": true}',
    '{"command": "npm test", "run_in_background" :\ttrue}',
    '{"command": "sleep 5 &"}',
    '{"command": "nohup ./serve"}',
    '{"command": "a && b"}',
    '{"cmd": "ls", "background": true}',
    '{"cmd": "ls", "notify_on_complete": false}',
    '{"chars": "x"}',
]


def _calls(con: duckdb.DuckDBPyConnection) -> list[tuple[str, int, int, str, str]]:
    calls = [
        (f"s{i % 3}", i % 4, i, name, args) for i, (name, args) in enumerate((n, a) for n in NAMES for a in ARGUMENTS)
    ]
    con.execute(
        "CREATE OR REPLACE TEMP TABLE stall_calls "
        "(session_id VARCHAR, turn_id BIGINT, seq INTEGER, name VARCHAR, arguments VARCHAR)"
    )
    con.executemany("INSERT INTO stall_calls VALUES (?, ?, ?, ?, ?)", calls)
    return calls


def _hits(con: duckdb.DuckDBPyConnection, rows: bool) -> list[tuple[object, ...]]:
    data = stall_data.install(con)
    con.execute(
        "CREATE OR REPLACE TEMP TABLE stall_bg_hits "
        "(session_id VARCHAR, turn_id BIGINT, seq INTEGER, ord INTEGER, id VARCHAR)"
    )
    if rows:
        sql.run(con, "replay/stall_background_match_rows")
    else:
        for i, bg in enumerate(data.background):
            sql.run(
                con,
                "replay/stall_background_match",
                {"ord": i, "id": bg.id, "tool": bg.tool, "arguments": bg.arguments},
            )
    return con.execute("SELECT * FROM stall_bg_hits ORDER BY ALL").fetchall()


def test_rows_match_per_entry() -> None:
    con = duckdb.connect()
    calls = _calls(con)
    per_entry = _hits(con, rows=False)
    assert per_entry == _hits(con, rows=True)
    data = stall_data.load()
    want = sorted(
        (s, t, q, i, bg.id)
        for s, t, q, name, args in calls
        for i, bg in enumerate(data.background)
        if re.search(bg.tool, name) and (bg.arguments is None or re.search(bg.arguments, args))
    )
    assert per_entry == want
    assert {r[4] for r in per_entry} == {bg.id for bg in data.background}  # (every entry matched some call)


def test_rows_empty_calls() -> None:
    con = duckdb.connect()
    con.execute(
        "CREATE TEMP TABLE stall_calls (session_id VARCHAR, turn_id BIGINT, seq INTEGER, name VARCHAR, arguments VARCHAR)"
    )
    assert _hits(con, rows=True) == [] == _hits(con, rows=False)
