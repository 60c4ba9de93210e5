"""The report's per-session summary rows: derived tables the sections read instead of the events.

Three stamped groups (stallscan.replay.derive), registered in the derived-table registry and, like the
sweep's `sweep_bins`, replaced per changed session after an ingest:

  * `session_cells` (queries/report/cells_sessions.sql): per session, harness and file, the event counts and
    time span and the session's models; the report's scope and its corpus section read them;
  * `boundary_cells`, `boundary_misreads` (cells_boundaries.sql): the turn-boundary replay counted per
    session by everything the "Turn boundaries" section groups by, and the router's errors;
  * `round_cells`, `turn_cells`, `signature_cells` (cells_stalls.sql): rounds, turns and signature hits per
    session for the "Stalls" section.

Each group is keyed on the stamp of the replay it summarises (turn_boundaries, stalls), so new options or
rules rebuild it, and the same events with the same upstream are read as they are. Every count is a sum of
per-session counts, so a section reads the same figures from the cells as from the rows
(tests/functional/test_report_cells.py). A connection without the events change counter (report
--from-parquet) computes them in full each time.
"""

from __future__ import annotations

from typing import Any

import duckdb

from stallscan.replay import registry
from stallscan.store import sql, stamps

SESSIONS = "session_cells"
BOUNDARIES = "boundary_cells"
STALLS = "stall_cells"


def _upstream_key(con: duckdb.DuckDBPyConnection, name: str) -> str | None:
    st = stamps.get(con, name)
    return None if st is None else str(st["key"])


def _run(con: duckdb.DuckDBPyConnection, entry: registry.Derived, query: str, inputs: dict[str, Any]) -> str:
    from stallscan.replay import derive

    return derive.run(con, entry.name, inputs, lambda c: sql.run(c, query), entry.outputs, upstream=entry.upstream)


def refresh_sessions(con: duckdb.DuckDBPyConnection) -> str:
    """Bring session_cells up to date with the events; returns the derive mode."""
    return _run(con, SESSION_ENTRY, "report/cells_sessions", {})


def refresh_boundaries(con: duckdb.DuckDBPyConnection) -> str:
    """Bring boundary_cells / boundary_misreads up to date with turn_boundaries (replayed by the caller)."""
    return _run(con, BOUNDARY_ENTRY, "report/cells_boundaries", {"boundaries": _upstream_key(con, "turn_boundaries")})


def refresh_stalls(con: duckdb.DuckDBPyConnection) -> str:
    """Bring round_cells / turn_cells / signature_cells up to date with the stall replay (replayed by the caller)."""
    return _run(con, STALL_ENTRY, "report/cells_stalls", {"stalls": _upstream_key(con, "stalls")})


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
    registry.Derived(SESSIONS, (SESSIONS,), (), lambda con, _: refresh_sessions(con), export=False)
)
BOUNDARY_ENTRY = registry.register(
    registry.Derived(
        BOUNDARIES,
        (BOUNDARIES, "boundary_misreads"),
        ("turn_boundaries",),
        lambda con, _: refresh_boundaries(con),
        export=False,
    )
)
STALL_ENTRY = registry.register(
    registry.Derived(
        STALLS,
        ("round_cells", "turn_cells", "signature_cells"),
        ("rounds", "turns"),
        lambda con, _: refresh_stalls(con),
        export=False,
    )
)
