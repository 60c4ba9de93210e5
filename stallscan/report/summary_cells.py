"""The report's per-session summary rows: derived tables the sections read instead of the events.

Three stamped groups, registered in the derived-table registry and, like the sweep's `sweep_bins`, replaced
per changed session after an ingest:

  * `session_cells` (queries/report/cells_sessions.sql): per session, harness and file, the event counts and
    time span and the session's models; the report's scope and its corpus section read them;
  * `boundary_cells`, `boundary_misreads` (cells_boundaries.sql, cells_misreads.sql): the turn-boundary
    replay counted per session by everything the "Turn boundaries" section groups by, and the router's errors;
  * `round_cells`, `turn_cells`, `signature_cells` (cells_rounds.sql, cells_turns.sql, cells_signatures.sql):
    rounds, turns and signature hits per session for the "Stalls" section.

Each group is stamped (stallscan.store.stamps) with the stamp key of the replay it summarises
(turn_boundaries, stalls), so new options or rules rebuild it, and the same events with the same upstream
are read as they are. A row depends on its own session only, so after an ingest the changed sessions'
rows are deleted and those sessions summarised again, straight from the upstream tables (no scratch
schema: stallscan.replay.derive copies the changed sessions out because the replay's statements read whole
tables; these take the sessions as a filter). Every count is a sum of per-session counts, so a section
reads the same figures from the cells as from the rows (tests/functional/test_report_cells.py). A
connection without the events change counter (report --from-parquet) builds them in full each time.
"""

from __future__ import annotations

import re
from typing import Any

import duckdb

from stallscan.replay import registry
from stallscan.replay.derive import STAMPING
from stallscan.store import sql, stamps

CHANGED = "cells_changed"  # temp table: the sessions an incremental refresh summarises again


def _refresh(con: duckdb.DuckDBPyConnection, entry: registry.Derived, inputs: dict[str, Any]) -> str:
    """Bring the entry's tables (each from report/cells_<query>.sql) up to date; returns reused / incremental
    / full."""
    loaded = [sql.load(f"report/cells_{query}") for query in QUERIES[entry.name]]
    statements = [stmts[-1] for stmts in loaded]  # (the ones before it: an incremental refresh's SET VARIABLEs)
    totals = sql.load(f"report/cells_{TOTALS[entry.name]}") if entry.name in TOTALS else []
    rows = sql.load(f"report/cells_{ROWS[entry.name]}") if entry.name in ROWS else []
    # the cells' own SQL is part of the key (stamps.rules_hash covers the replay's and the sweep's): a table
    # whose columns changed is rebuilt, never filled by name from the new statement
    inputs = {
        **inputs,
        "rules": stamps.rules_hash(),
        "cells": stamps.key_of({"sql": [s for stmts in loaded for s in stmts] + totals + rows}),
    }
    key = stamps.key_of(inputs)
    found: set[str] = set()
    state: dict[str, Any] = {}
    mode, since = stamps.plan(con, entry.name, key, entry.outputs, found, state)
    if mode == "reused":
        return mode
    if mode == "incremental" and since is not None:
        n_sessions: int | None = stamps.changed_sessions(con, since, CHANGED)
    else:
        n_sessions = None
        con.execute(f"CREATE OR REPLACE TEMP TABLE {CHANGED} (session_id VARCHAR)")  # (the queries name it)
    con.execute("BEGIN TRANSACTION")
    try:
        few = n_sessions is not None and n_sessions <= ROWS_MAX_SESSIONS
        for step in rows[1:] if few else rows[:1]:  # the upstream rows the entry's queries read
            with sql.timed(f"report/cells_{ROWS[entry.name]}"):
                con.execute(step)
        for i, (table, query, stmt) in enumerate(zip(entry.outputs, QUERIES[entry.name], statements)):
            with sql.timed(f"report/cells_{query}"):
                if n_sessions is None:
                    con.execute(f"CREATE OR REPLACE TABLE main.{table} AS {stmt}", {"all": True})
                else:
                    if query in SKIPPED_WHEN_NONE and not _any(con, SKIPPED_WHEN_NONE[query]):
                        continue  # no stored row of the changed sessions, none to add
                    if i == 0 and totals:  # the changed sessions' old part of the first table's sums
                        con.execute(totals[1])
                    con.execute(f"DELETE FROM main.{table} WHERE session_id IN (SELECT session_id FROM {CHANGED})")
                    for before in loaded[i][:-1]:  # the changed sessions' values the query reads as constants
                        con.execute(before)
                    con.execute(f"INSERT INTO main.{table} BY NAME {stmt}", {"all": False})
                    for name in re.findall(r"^SET VARIABLE (\w+)", "\n".join(loaded[i][:-1]), re.M):
                        con.execute(f"RESET VARIABLE {name}")
                    if i == 0 and totals:  # ... and their new part, merged into the sums
                        for step in totals[2:]:
                            con.execute(step)
        if n_sessions is None and totals:
            con.execute(totals[0])
        with STAMPING:  # (a replay may be stamping beside it: stallscan.replay.together)
            known = stamps.put(con, entry.name, key, inputs, mode, n_sessions, found, state)
            con.execute("COMMIT")
            stamps.prune_changes(con, known)
    except BaseException:
        sql.rollback(con)
        raise
    sql.report(f"derive {entry.name} ({mode})")  # $STALLSCAN_PROFILE=1: each statement's seconds, to stderr
    return mode


def _any(con: duckdb.DuckDBPyConnection, query: str) -> bool:
    with sql.timed(f"report/cells_{query}"):
        row = sql.first(sql.query(con, f"report/cells_{query}"))
    return bool(row and row[0])


def _upstream_key(con: duckdb.DuckDBPyConnection, name: str) -> str | None:
    st = stamps.get(con, name)
    return None if st is None else str(st["key"])


def refresh_sessions(con: duckdb.DuckDBPyConnection) -> str:
    """Bring session_cells up to date with the events; returns the mode. In a report (stamps.kept_tables) once:
    nothing in the block writes events, so the second lane's scope finds them up to date without a plan."""
    notes = stamps.noted(None)
    if notes is not None and notes.get(SESSION_ENTRY.name):
        return "reused"
    mode = _refresh(con, SESSION_ENTRY, {})
    if notes is not None:
        notes[SESSION_ENTRY.name] = True
    return mode


def refresh_boundaries(con: duckdb.DuckDBPyConnection, scoped: bool = False) -> str:
    """Bring boundary_cells / boundary_misreads / boundary_totals up to date with turn_boundaries (replayed by
    the caller). scoped: the report's scope (scope_sessions, the variable scope_whole) is made on `con`; the
    table macro scoped_boundary_cells() (report/scoped_boundary_cells.sql) is then made for the queries that
    sum its cells."""
    upstream = _upstream_key(con, "turn_boundaries")
    # in a report (stamps.kept_tables), once the cells are refreshed from this turn_boundaries stamp on this
    # connection (and the macro made when asked), a second call (the threshold section's count of the tool results
    # left out, after the boundaries section) has nothing to do: nothing in the block writes events, and the
    # cells change only with that stamp
    notes = stamps.noted(con)
    done = notes.get(BOUNDARY_ENTRY.name) if notes is not None else None
    if done is not None and upstream is not None and done[0] == upstream and (done[1] or not scoped):
        return "reused"
    mode = _refresh(con, BOUNDARY_ENTRY, {"boundaries": upstream})
    if scoped:
        sql.run(con, "report/scoped_boundary_cells")
    if notes is not None:
        notes[BOUNDARY_ENTRY.name] = (upstream, scoped)
    return mode


def refresh_boundaries_scoped(con: duckdb.DuckDBPyConnection) -> str:
    """refresh_boundaries(con, scoped=True): for a caller that takes a one-argument function."""
    return refresh_boundaries(con, scoped=True)


def refresh_stalls(con: duckdb.DuckDBPyConnection) -> str:
    """Bring round_cells / turn_cells / signature_cells up to date with the stall replay (replayed by the caller)."""
    return _refresh(con, STALL_ENTRY, {"stalls": _upstream_key(con, "stalls")})


def _rows(cur: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    cols = [d[0] for d in cur.description]
    return [dict(zip(cols, r)) for r in cur.fetchall()]


def stall_counts(con: duckdb.DuckDBPyConnection) -> dict[str, Any]:
    """stallscan.replay.stalls.summary_counts over the report's scope, from the cells."""
    out: dict[str, Any] = {}
    for r in _rows(sql.query(con, "report/stalls_counts")):
        out.setdefault(r["harness"], {}).setdefault(r["what"], {})[r["key"]] = r["n"]
    return out


def stall_rates(con: duckdb.DuckDBPyConnection) -> dict[str, Any]:
    """stallscan.replay.stalls.silent_rates over the report's scope, from the cells."""
    out: dict[str, Any] = {"harness": [], "model": [], "provider": []}
    for r in _rows(sql.query(con, "report/stalls_rates")):
        out[r.pop("dimension")].append(r)
    return out


def signature_hits(con: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    """stallscan.replay.stalls.signature_hits over the report's scope, from the cells."""
    return _rows(sql.query(con, "report/stalls_signature_hits"))


SESSION_ENTRY = registry.register(
    registry.Derived("session_cells", ("session_cells",), (), lambda con, _: refresh_sessions(con), export=False)
)
BOUNDARY_ENTRY = registry.register(
    registry.Derived(
        "boundary_cells",
        ("boundary_cells", "boundary_misreads", "boundary_totals"),
        ("turn_boundaries",),
        lambda con, _: refresh_boundaries(con),
        export=False,
    )
)
STALL_ENTRY = registry.register(
    registry.Derived(
        "stall_cells",
        ("round_cells", "turn_cells", "signature_cells"),
        ("rounds", "turns"),
        lambda con, _: refresh_stalls(con),
        export=False,
    )
)
QUERIES = {  # each output's query file, report/cells_<name>.sql, in the order of the entry's outputs
    "session_cells": ("sessions",),
    "boundary_cells": ("boundaries", "misreads"),
    "stall_cells": ("rounds", "turns", "signatures"),
}
# an entry's first table summed over every session (report/cells_<name>.sql: the full build, then the steps of an
# incremental one): the last of the entry's outputs, read by a report over every session
TOTALS = {"boundary_cells": "boundary_totals"}
# an entry's upstream rows as a table macro its queries read (report/cells_<name>.sql: statement 0 for a full build,
# the others for an incremental one): a view that is costly to plan, read once for the changed sessions
ROWS = {"boundary_cells": "boundary_rows"}
# an output whose incremental refresh is skipped when report/cells_<name>.sql answers false for the changed sessions
# (none of their rows stored, none to add): most sessions have no signature hit, and the INSERT reads the view
# rounds_narrow (5-7 CPU ms to plan)
SKIPPED_WHEN_NONE = {"signatures": "signatures_any"}
# an incremental refresh over at most this many changed sessions copies their rows (into a temp table, kept in memory
# until the next refresh); over more, its queries read the view, narrowed by cells_changed as before
ROWS_MAX_SESSIONS = 64
