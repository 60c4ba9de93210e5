"""Derive once: bring a derived table group up to date with `events`, doing only the work that changed.

`run(con, name, inputs, compute, outputs)` compares the group's stamp (stallscan.store.stamps) with the
inputs and the events change counter, then either

* reuses the tables (same inputs, no event changed since),
* replays incrementally: the sessions changed since the stamp are copied (with the upstream rows they
  need) into a scratch schema, `compute` runs there unchanged (the same SQL, resolved through the
  search path), and their rows replace those sessions' rows in the main tables; or
* runs `compute` on everything (new inputs, no stamp, no change counter, or most sessions changed).

The scratch tables of a run over a few sessions (MEMORY_MAX_SESSIONS) are kept in an in-memory database
attached under the scratch name, so that writing them commits nothing to the file's WAL; a larger run keeps them
in a schema of that name in the file. Either way `{scratch}.t` names them.

Sessions are independent in every replay rule, so the incremental result equals a full replay
(tests/functional/test_derive.py holds the two equal on the real files split into random appends).
"""

from __future__ import annotations

import contextlib
import threading
import weakref
from collections.abc import Callable, Iterator
from typing import Any

import duckdb

from stallscan.store import sql, stamps
from stallscan.store.db import SCRATCH_NAMES

SCRATCH = SCRATCH_NAMES[0]  # (a database file of this name is refused: store.db.connect)
# which events an event-keyed table has a row for
EVENT_ROWS = {"user_labels_narrow": "role IN ('user', 'tool')"}
# the derived tables keyed neither by session nor by event: the same for the same inputs (the labels' code table),
# copied whole as upstream, left as they are by a merge; every other derived table has a session_id column
WHOLE = frozenset(("user_labels_rules",))
FULL_SHARE = 0.5  # above this share of sessions changed, a full replay is cheaper than copying them out
SAMPLE_ROWS = 8192  # events (by rowid: a scan of their vectors only) whose distinct sessions are counted first
# one writer of the stamps at a time: two replays at once (stallscan.replay.together), and the report's
# summaries derived beside them (stallscan.report.summary_cells), write to one table, and
# pruning the change log from two transactions at once could conflict
STAMPING = threading.Lock()
# an incremental run over at most this many changed sessions keeps its scratch tables in an in-memory database
# attached under the scratch name (so `{scratch}.t` names them either way), not in a schema of the file: a
# statement that writes a table of the file commits to its WAL and syncs it, about 6 ms of wall each at load 4-5
# against 1 ms of CPU (a report after one new session: 64 fdatasync, 0.68 s of wall in them; 20 with this). An
# in-memory database spills to the temp directory beyond the memory limit as the file's tables do; runs over more
# sessions keep the schema of the file all the same (the in-memory one is measured only for a few sessions)
MEMORY_MAX_SESSIONS = 64
# the scratch schema of this thread's incremental runs: SCRATCH, or another name for a lane that runs beside a
# thread using SCRATCH (stallscan.report.build's lanes: the stall replay's runs beside the turn boundaries', whose
# sweep_bins merge names SCRATCH in queries/sweep/sweep_boot_delta_cells.sql)
_LANE = threading.local()
# per connection, the scratch names whose last incremental run on it ended with its scratch dropped: a later run
# there finds no schema or database of that name left (one left by a killed process is dropped by the first run),
# so it skips the DROP SCHEMA IF EXISTS and DETACH IF EXISTS that clear one (2 of a run's statements)
_CLEAN: weakref.WeakKeyDictionary[duckdb.DuckDBPyConnection, set[str]] = weakref.WeakKeyDictionary()


def in_scratch() -> bool:
    """Whether this thread is inside an incremental run's compute (its tables in the scratch schema, which is
    dropped after the merge): a compute may then leave out what only the database's own schema keeps (views
    nothing in the run reads; the database's own stay as the full replay made them)."""
    return bool(getattr(_LANE, "computing", False))


def scratch() -> str:
    """The scratch schema this thread's incremental runs use."""
    return str(getattr(_LANE, "scratch", SCRATCH))


@contextlib.contextmanager
def scratch_named(name: str) -> Iterator[None]:
    """Incremental runs of this thread (inside the block) use the scratch schema `name`."""
    before = scratch()
    _LANE.scratch = name
    try:
        yield
    finally:
        _LANE.scratch = before


def run(
    con: duckdb.DuckDBPyConnection,
    name: str,
    inputs: dict[str, Any],
    compute: Callable[[duckdb.DuckDBPyConnection], None],
    outputs: tuple[str, ...],
    upstream: tuple[str, ...] = (),
    merge: Callable[[duckdb.DuckDBPyConnection], None] | None = None,
    seen: dict[str, Any] | None = None,
) -> str:
    """Bring `outputs` up to date; returns the mode used: reused / incremental / full.

    upstream: derived tables `compute` reads besides `events` (already up to date), copied for the changed
    sessions. A table without a session_id column is matched by event_id when EVENT_ROWS names it
    (user_labels_narrow), else copied whole (user_labels_rules).
    merge: in an incremental run, called inside the transaction that replaces the changed sessions' rows,
    before they are replaced (main holds their old rows, the scratch schema (SCRATCH) their new ones), to
    bring a table kept from those rows (stallscan.sweep.boot's sums) along in the same commit.
    seen: filled with the stamp key, and for a reuse the events version the stamp (checked against the events'
    count) says the tables reflect: what a caller may key a summary of the reused tables on; after a full or
    incremental run, `written`: the events version its stamp was written with, when the plan read it (else None:
    the caller reads the stamp)."""
    inputs = {**inputs, "rules": stamps.rules_hash()}
    key = stamps.key_of(inputs)
    found: set[str] = set()
    state: dict[str, Any] = {}
    mode, since = stamps.plan(con, name, key, outputs, found, state, sample_rows=SAMPLE_ROWS)
    n_sessions = None
    if mode == "incremental" and since is not None:
        n_sessions = stamps.changed_sessions(con, since, "derive_sessions")
        if n_sessions > FULL_SHARE * max(_sessions_at_least(con, n_sessions, state.get("sample")), 1):
            mode = "full"
    if seen is not None:
        seen.update(key=key, version=since if mode == "reused" else None)
    if mode == "reused":
        return mode  # nothing written: a command that only reuses leaves the database as it was

    def stamp(c: duckdb.DuckDBPyConnection) -> None:
        stamps.prune_changes(c, stamps.put(c, name, key, inputs, mode, n_sessions, found, state))

    if mode == "full":
        compute(con)
        with STAMPING:
            stamp(con)
    else:
        _incremental(
            con,
            compute,
            outputs,
            upstream,
            merge,
            stamp,
            in_memory=n_sessions is not None and n_sessions <= MEMORY_MAX_SESSIONS,
            counts=(state.get("n_stamp"), state.get("n")),
        )
    if seen is not None:  # (put() writes the plan's counter as it is when the plan read it with the count)
        seen["written"] = int(state["ev"]) if "ev" in state and "n" in state else None
    sql.report(f"derive {name} ({mode})")  # $STALLSCAN_PROFILE=1: each statement's seconds, to stderr
    return mode


def _sessions_at_least(con: duckdb.DuckDBPyConnection, changed: int, some: int | None = None) -> int:
    """The sessions of `events`, or a lower bound of them that already keeps the run incremental: the
    distinct sessions among the events of rowid < SAMPLE_ROWS when they are enough, else the full count (a
    count(DISTINCT session_id) of every event: 0.01 CPU s at 1M events, once per derived group, against 0.002).
    The mode chosen is the same either way: the changed sessions are at most FULL_SHARE of both. some: that
    sample's count when stamps.plan read it already (its `state`: no statement of its own)."""
    if some is None:
        some = stamps.one(con, f"SELECT count(DISTINCT session_id) FROM main.events WHERE rowid < {SAMPLE_ROWS}")
    if changed <= FULL_SHARE * max(some, 1):
        return int(some)
    return int(stamps.one(con, "SELECT count(DISTINCT session_id) FROM main.events"))


def _incremental(
    con: duckdb.DuckDBPyConnection,
    compute: Callable[[duckdb.DuckDBPyConnection], None],
    outputs: tuple[str, ...],
    upstream: tuple[str, ...],
    merge: Callable[[duckdb.DuckDBPyConnection], None] | None = None,
    stamp: Callable[[duckdb.DuckDBPyConnection], None] | None = None,
    in_memory: bool = False,
    counts: tuple[int | None, int | None] = (None, None),
) -> None:
    """stamp: writes the stamp (and prunes the change log) inside the transaction that replaces the changed
    sessions' rows, so that rows and stamp land in one commit (each commit of a write costs ~10-20 ms).
    in_memory: the scratch tables in an in-memory database attached as the scratch name (MEMORY_MAX_SESSIONS),
    else in a schema of that name in the file.
    counts: (the events' count the stamp was written with, the events' count now), as the plan read them; with
    the changed sessions' events copied they tell whether main holds any row of those sessions (_only_new)."""
    s = scratch()
    # the tables keyed by session (every derived table but those of EVENT_ROWS and WHOLE), known without a
    # catalog read (~1 CPU ms in each of the 4 incremental runs after one new session): an incremental run only
    # meets tables its own code made (the stamp's key holds the replay's code, stamps.rules_hash)
    keyed = {t for t in (*upstream, *outputs) if t not in EVENT_ROWS and t not in WHOLE}
    clean = _CLEAN.setdefault(con, set())
    was_clean = s in clean
    clean.discard(s)
    if not was_clean:
        con.execute(f"DROP SCHEMA IF EXISTS {s} CASCADE")  # (one left by a killed process would hide the database)
    if in_memory:
        if not was_clean:
            con.execute(f"DETACH DATABASE IF EXISTS {s}")
        con.execute(f"ATTACH ':memory:' AS {s}")
    else:
        con.execute(f"CREATE SCHEMA {s}")
    drop = f"DETACH DATABASE IF EXISTS {s}" if in_memory else f"DROP SCHEMA IF EXISTS {s} CASCADE"
    failed = True  # (the clean-ups below must not replace the error of a failed write: a full disk, say)
    try:
        copied = stamps.one(  # (the row count a CREATE ... AS returns: no statement of its own)
            con,
            f"CREATE TABLE {s}.events AS SELECT * FROM main.events "
            "WHERE session_id IN (SELECT session_id FROM derive_sessions)",
        )
        only_new = _only_new(counts[0], int(copied), counts[1])
        for t in upstream:
            if t in keyed:
                where = "session_id IN (SELECT session_id FROM derive_sessions)"
            elif t in EVENT_ROWS:
                where = f"event_id IN (SELECT event_id FROM {s}.events)"
            else:
                where = "true"
            con.execute(f"CREATE TABLE {s}.{t} AS SELECT * FROM main.{t} WHERE {where}")
        saved = stamps.one(con, "SELECT current_setting('search_path')")
        con.execute(f"SET search_path = '{s}.main'" if in_memory else f"SET search_path = '{s}'")
        computed = False
        _LANE.computing = True
        try:
            compute(con)
            computed = True
        finally:
            _LANE.computing = False
            sql.after_failure(con, f"SET search_path = '{saved}'" if saved else "RESET search_path", not computed)
        con.execute("BEGIN TRANSACTION")
        try:
            if merge is not None:
                merge(con)
            for t in outputs:
                if t in WHOLE:
                    continue  # (a code table: the same inputs made the same rows)
                if only_new:  # (main holds no row of the changed sessions: nothing to delete)
                    con.execute(f"INSERT INTO main.{t} BY NAME SELECT * FROM {s}.{t}")
                elif t in keyed:
                    con.execute(f"DELETE FROM main.{t} WHERE session_id IN (SELECT session_id FROM derive_sessions)")
                    con.execute(f"INSERT INTO main.{t} BY NAME SELECT * FROM {s}.{t}")
                else:
                    _replace_event_rows(con, t, s)
            with STAMPING:  # (held to the COMMIT: two replays' prunes of the change log must not overlap)
                if stamp is not None:
                    stamp(con)
                con.execute("COMMIT")
        except BaseException:
            sql.rollback(con)
            raise
        failed = False
    finally:
        sql.after_failure(con, drop, failed)
    clean.add(s)  # (only after a run whose statements and clean-up all succeeded)


def _only_new(n_stamp: int | None, copied: int, n_now: int | None) -> bool:
    """Whether the changed sessions had no event when the stamp was written, and no event was removed since: then
    the tables hold no row of theirs (each derived row comes from its session's events, and the tables were
    exact for the events the stamp counted), and their rows are inserted without the DELETE of each output table
    (0.5-3 CPU ms each at 1M events; the labels' by event id 19 ms). Every event added or removed since the
    stamp is a changed session's (the change log names them), and `copied` holds every event of those sessions
    now: with k of their events there before and r removed, n_stamp + copied = n_now + k + r, so equal only when
    k = r = 0. (Rows written into events outside an ingest are not tracked: the stamp's contract, as before.)"""
    return n_stamp is not None and n_now is not None and n_stamp + copied == n_now


def _replace_event_rows(con: duckdb.DuckDBPyConnection, t: str, s: str) -> None:
    """Inside the merge's transaction: the changed sessions' rows of `t`, a table keyed by event (EVENT_ROWS:
    user_labels, one row per user / tool event), replaced by the scratch's: their events' rows deleted, the
    scratch's inserted, then rows of events that no longer exist, looked for only when the row count says so
    (both counts in one statement)."""
    con.execute(f"DELETE FROM main.{t} WHERE event_id IN (SELECT event_id FROM {s}.events)")
    con.execute(f"INSERT INTO main.{t} BY NAME SELECT * FROM {s}.{t}")
    rows, want = con.execute(
        f"SELECT (SELECT count(*) FROM main.{t}), (SELECT count(*) FROM main.events WHERE {EVENT_ROWS[t]})"
    ).fetchall()[0]
    if rows != want:
        con.execute(f"DELETE FROM main.{t} WHERE event_id NOT IN (SELECT event_id FROM main.events)")
