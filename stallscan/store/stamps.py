"""Derivation stamps: what each derived table was computed from, and the log of changed sessions.

The events change counter is `stallscan_meta['events_version']`. Every committed ingest batch bumps it and
writes the sessions it touched (rows added, replaced or removed) to `events_changes(version, session_id)`.
A database whose events were never written by ingest (a test's hand-made `events`, a fresh in-memory
connection holding only `events`) has no counter: nothing is ever reused there.

`derive_stamps` holds one row per derived table group:

    name            user_labels / turn_boundaries / stalls (rounds, stalls, turns) / sweep_bins
    key             sha256 of the inputs (options, rule-library and SQL hash, upstream stamp keys)
    inputs          the inputs as JSON (so a stale table can be brought up to date with its own options)
    events_version  the events change counter the table reflects
    n_events        count(*) of events then (catches writes that bypassed ingest: rows added or removed)
    mode            how it was last computed: full / incremental
    n_full, n_incremental   how many times each happened (a reuse writes nothing, so n_reused stays 0; the
                    column stays so that older databases' stamps read as before)
    n_sessions      sessions recomputed by the last incremental run
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import weakref
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import duckdb

from stallscan.store import sql
from stallscan.store.version import __version__

VERSION_KEY = "events_version"
STAMPS = "derive_stamps"
CHANGES = "events_changes"
ROOT = Path(__file__).resolve().parents[1]


@cache
def rules_hash() -> str:
    """sha256 over the rule libraries (stallscan/data/*), the replay/sweep SQL, the replay's Python (its
    column scans compute part of the tables), and the version."""
    from stallscan.store.sql import queries_dir

    h = hashlib.sha256(__version__.encode())
    q = queries_dir()
    files = sorted((ROOT / "data").rglob("*")) + sorted(q.glob("replay/*.sql")) + sorted(q.glob("sweep/*.sql"))
    files += sorted((ROOT / "replay").glob("*.py"))
    for p in files:
        if p.is_file():
            h.update(p.name.encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def one(con: duckdb.DuckDBPyConnection, query: str, params: list[Any] | dict[str, Any] | None = None) -> Any:
    """The first column of the first row of a query that always returns one row."""
    return (con.execute(query, params) if params is not None else con.execute(query)).fetchall()[0][0]


def key_of(inputs: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(inputs, sort_keys=True, default=str).encode()).hexdigest()[:24]


# per connection, the tables of main among STABLE that a catalog look-up found: none of them is ever dropped
# (the change log is pruned by DELETE, the stamps are deleted by row), so a look-up that asks only for these
# is answered without the catalog query (~1 CPU ms each at 29 tables; the report after one new session made
# 30 of them, 19 asking only for these)
STABLE = frozenset(("stallscan_meta", STAMPS, CHANGES, "events"))
_FOUND: weakref.WeakKeyDictionary[duckdb.DuckDBPyConnection, set[str]] = weakref.WeakKeyDictionary()
# inside kept_tables() (one report's labels and build: stallscan.cli.report_cmd), per connection, every table and
# view of main a look-up found, not only STABLE: the plans of the report's derived groups (stamps.plan asks for
# each group's outputs) are answered from the first look-up of the connection. Nothing the report runs drops a
# table of main that a plan or get asks for: a full replay writes its outputs by CREATE OR REPLACE, a table that
# became a view is dropped and made again as the view in one step (sql.drop_stored_table, user_labels_encode.sql),
# the incremental runs write to their scratch and to main's tables by DELETE / INSERT; what drops tables of main
# (--rebuild, store.db._drop_all; sweep.boot.drop's sweep_boot, which no plan asks for) runs before the block or is
# not looked up here. A table found missing is looked up again each time (it may be made meanwhile). Outside the
# block (the notebook API: a user's own SQL may drop a table between two calls) only STABLE is kept.
_KEPT: list[weakref.WeakKeyDictionary[duckdb.DuckDBPyConnection, set[str]] | None] = [None]
# inside kept_tables(), the events change counter and the events' count once a look-up read them: nothing in a
# report's labels and build writes events or the counter (its ingest ran before the block), so later asks of
# them (with_state(con), events_version: the memo's key and put, the session refs) need no statement
_STATE: list[tuple[int | None, int] | None] = [None]
# inside kept_tables(), per connection, what a caller noted as done on it in the block (noted())
_NOTES: list[weakref.WeakKeyDictionary[Any, dict[str, Any]] | None] = [None]


class _Block:
    """The key of noted(None)'s dict (a WeakKeyDictionary key: this module holds the object)."""


_BLOCK = _Block()


@contextlib.contextmanager
def kept_tables() -> Iterator[None]:
    """The tables of main a catalog look-up of _existing found kept for the block (see _KEPT), and the events'
    counter and count once read (_STATE); blocks nest."""
    if _KEPT[0] is not None:
        yield
        return
    _KEPT[0], _NOTES[0] = weakref.WeakKeyDictionary(), weakref.WeakKeyDictionary()
    try:
        yield
    finally:
        _KEPT[0] = _NOTES[0] = None
        _STATE[0] = None


def noted(con: duckdb.DuckDBPyConnection | None) -> dict[str, Any] | None:
    """Inside kept_tables(): a dict of the block for `con`, where a caller notes what it did on the connection
    (stallscan.report.summary_cells: the boundary cells refreshed and their macro made), or with con None one for
    the whole block (its connections are one report's, on one database: the session cells refreshed); None
    outside the block."""
    notes = _NOTES[0]
    return None if notes is None else notes.setdefault(con if con is not None else _BLOCK, {})


def kept_for(cur: duckdb.DuckDBPyConnection, con: duckdb.DuckDBPyConnection) -> None:
    """Inside kept_tables(): a cursor `cur` of `con` (the same database) starts with what con's look-ups kept (added
    to what its own kept, when it made some already: stallscan.report.lanes.Ready)."""
    kept = _KEPT[0]
    if kept is not None and con in kept:
        kept.setdefault(cur, set()).update(kept[con])
    if con in _FOUND:
        _FOUND.setdefault(cur, set()).update(_FOUND[con])


def _existing(con: duckdb.DuckDBPyConnection, tables: list[str]) -> set[str]:
    """Which of `tables` exist in main (one catalog query for several _has)."""
    from stallscan.store.db import SCRATCH_NAMES

    seen = _FOUND.get(con)
    kept = _KEPT[0]
    more = kept.get(con) if kept is not None else None
    if seen is not None and seen.union(more or ()).issuperset(tables):
        return set(tables)
    here, names = sql.main_tables(con)
    _FOUND.setdefault(con, set()).update(names & STABLE)
    if kept is not None and here not in SCRATCH_NAMES:  # (not what an incremental run's scratch holds)
        kept.setdefault(con, set()).update(names)
    return names & set(tables)


def events_version(con: duckdb.DuckDBPyConnection, known: set[str] | None = None) -> int | None:
    """The events change counter, or None when events were never written by ingest. known: the tables of
    main _existing found, when the caller looked them up already."""
    if _KEPT[0] is not None and _STATE[0] is not None:
        return _STATE[0][0]
    if "stallscan_meta" not in (known if known is not None else _existing(con, ["stallscan_meta"])):
        return None
    row = sql.first(con.execute("SELECT value FROM main.stallscan_meta WHERE key = ?", [VERSION_KEY]))
    return int(row[0]) if row else None


def record_changes(con: duckdb.DuckDBPyConnection, sessions_sql: str) -> int:
    """Inside an ingest transaction: bump the counter and log the sessions `sessions_sql` selects
    (a query with a session_id column). Returns the new version."""
    v = (events_version(con) or 0) + 1
    con.execute(f"CREATE TABLE IF NOT EXISTS main.{CHANGES} (version BIGINT NOT NULL, session_id VARCHAR NOT NULL)")
    con.execute(f"INSERT INTO main.{CHANGES} SELECT DISTINCT $v::BIGINT, session_id FROM ({sessions_sql})", {"v": v})
    con.execute("INSERT OR REPLACE INTO main.stallscan_meta VALUES ($k, $v)", {"k": VERSION_KEY, "v": str(v)})
    return v


def record_batches(con: duckdb.DuckDBPyConnection, n: int, sessions_sql: str) -> int:
    """record_changes for `n` ingest batches at once (one statement, not one per batch): batch k (1..n)
    gets version v + k, with the sessions `sessions_sql` selects for it (a query with columns k and
    session_id), exactly as n calls of record_changes in batch order would. Returns the last version."""
    v = events_version(con) or 0
    con.execute(f"CREATE TABLE IF NOT EXISTS main.{CHANGES} (version BIGINT NOT NULL, session_id VARCHAR NOT NULL)")
    con.execute(
        f"INSERT INTO main.{CHANGES} SELECT DISTINCT $v::BIGINT + k, session_id FROM ({sessions_sql})", {"v": v}
    )
    con.execute("INSERT OR REPLACE INTO main.stallscan_meta VALUES ($k, $v)", {"k": VERSION_KEY, "v": str(v + n)})
    return v + n


def get(con: duckdb.DuckDBPyConnection, name: str, known: set[str] | None = None) -> dict[str, Any] | None:
    if STAMPS not in (known if known is not None else _existing(con, [STAMPS])):
        return None
    cur = con.execute(f"SELECT * FROM main.{STAMPS} WHERE name = ?", [name])
    row = sql.first(cur)
    if row is None:
        return None
    out = dict(zip([d[0] for d in cur.description], row))
    out["inputs"] = json.loads(out["inputs"])
    return out


def get_many(con: duckdb.DuckDBPyConnection, names: tuple[str, ...]) -> dict[str, dict[str, Any]]:
    """get() of several stamps in one statement, by name; a name without a stamp is left out."""
    if STAMPS not in _existing(con, [STAMPS]):
        return {}
    cur = con.execute(f"SELECT * FROM main.{STAMPS} WHERE list_contains(?, name)", [list(names)])
    cols = [d[0] for d in cur.description]
    out = {}
    for row in cur.fetchall():
        stamp = dict(zip(cols, row, strict=True))
        stamp["inputs"] = json.loads(stamp["inputs"])
        out[stamp["name"]] = stamp
    return out


def sessions_changed(con: duckdb.DuckDBPyConnection, since: int) -> int | None:
    """How many sessions the change log names after version `since`; None without a change log (every run is
    then full)."""
    if CHANGES not in _existing(con, [CHANGES]):
        return None
    return int(one(con, f"SELECT count(DISTINCT session_id) FROM main.{CHANGES} WHERE version > ?", [since]))


def with_state(
    con: duckdb.DuckDBPyConnection, name: str | None = None
) -> tuple[dict[str, Any] | None, int | None, int]:
    """(the stamp of `name` as get() returns it, or None; the events change counter as events_version()
    returns it; count(*) of events, 0 with no events table) in two statements: the catalog look-up and one query, where get(),
    events_version() and n_events() take five."""
    if name is None and _KEPT[0] is not None and _STATE[0] is not None:
        return None, _STATE[0][0], _STATE[0][1]
    known = _existing(con, ["stallscan_meta", STAMPS, "events"])
    ev = "(SELECT value FROM main.stallscan_meta WHERE key = $vk)" if "stallscan_meta" in known else "NULL"
    n = "(SELECT count(*) FROM main.events)" if "events" in known else "0"
    stamp = name is not None and STAMPS in known
    cur = con.execute(
        f"SELECT {ev}, {n}"
        + (f", s.* FROM (SELECT 1) one LEFT JOIN main.{STAMPS} s ON s.name = $name" if stamp else ""),
        ({"vk": VERSION_KEY} if "stallscan_meta" in known else {}) | ({"name": name} if stamp else {}),
    )
    row = cur.fetchall()[0]
    st = None
    if stamp and row[2] is not None:  # (name is the stamp's primary key: NULL only when there is no row)
        st = dict(zip([d[0] for d in cur.description[2:]], row[2:]))
        st["inputs"] = json.loads(st["inputs"])
    state = (int(row[0]) if row[0] is not None else None), int(row[1])
    if _KEPT[0] is not None and state[0] is not None:  # (kept only as read from the database's own stallscan_meta:
        _STATE[0] = state  # an incremental run's scratch has none, and its events are the changed sessions' copy)
    return st, state[0], state[1]


def n_events(con: duckdb.DuckDBPyConnection) -> int:
    """count(*) of events (inside kept_tables(), once read there: _STATE)."""
    if _KEPT[0] is not None and _STATE[0] is not None:
        return _STATE[0][1]
    return int(one(con, "SELECT count(*) FROM main.events"))


def plan(
    con: duckdb.DuckDBPyConnection,
    name: str,
    key: str,
    outputs: tuple[str, ...],
    found: set[str] | None = None,
    state: dict[str, Any] | None = None,
    sample_rows: int = 0,
) -> tuple[str, int | None]:
    """('reused' | 'incremental' | 'full', the events version the incremental run starts from), in two
    statements: the catalog look-up, then one query of the counter, the stamp, the events' count and the
    change log's versions since the stamp (events_version(), get(), n_events() and the log's count took four).
    found: filled with the tables of main the look-up found (what put() may be given as known).
    state: filled, when that query ran, with what it read: `ev` (the counter) and `n` (the events' count), which
    put() then writes as they are instead of reading them again (nothing writes events between a plan and its
    put: a derive reads them), with `n_stamp`: the events' count the stamp was written with (None without one), and
    with sample_rows > 0, `sample`: the distinct sessions among the events of rowid < sample_rows
    (stallscan.replay.derive's lower bound of the sessions, without a statement of its own)."""
    known = _existing(con, ["stallscan_meta", STAMPS, CHANGES, "events", *outputs])
    if found is not None:
        found.update(known)
    if "stallscan_meta" not in known or STAMPS not in known:
        return "full", None
    n = "(SELECT count(*) FROM main.events)" if "events" in known else "NULL"
    # (the log's versions after the stamp's, by a join with the stamp's row, not correlated with the outer row: a
    # correlated count took 4-5 ms against 1.5-2 for the whole query, even over an empty log; scalar subqueries
    # for the two bounds 0.8 CPU ms of the query's 1.7, this join 0.45. No upper bound: the log holds no version
    # above the counter (record_changes writes both in one transaction), and one there would only make the count
    # exceed ev - since, a full run)
    logged = (
        f"(SELECT count(DISTINCT c.version) FROM main.{CHANGES} c "
        f"JOIN main.{STAMPS} t ON c.version > t.events_version WHERE t.name = $name)"
        if CHANGES in known
        else "NULL"
    )
    some = (
        f"(SELECT count(DISTINCT session_id) FROM main.events WHERE rowid < {int(sample_rows)})"
        if sample_rows > 0 and "events" in known
        else "NULL"
    )
    row = con.execute(
        f"SELECT v.ev, s.key, s.events_version, s.n_events, {n}, {logged}, {some} "
        "FROM (SELECT (SELECT value FROM main.stallscan_meta WHERE key = $vk) AS ev) v "
        f"LEFT JOIN main.{STAMPS} s ON s.name = $name",
        {"vk": VERSION_KEY, "name": name},
    ).fetchall()[0]
    ev = int(row[0]) if row[0] is not None else None
    st_key, since, st_n = row[1], row[2], row[3]
    if _KEPT[0] is not None and ev is not None and row[4] is not None:  # (as in with_state)
        _STATE[0] = (ev, int(row[4]))
    if state is not None and ev is not None and row[4] is not None:
        state.update(ev=ev, n=int(row[4]), sample=None if row[6] is None else int(row[6]))
        state.update(n_stamp=None if st_n is None else int(st_n))
    if ev is None or st_key is None or st_key != key or since is None:
        return "full", None
    if not all(t in known for t in outputs):
        return "full", None
    if since == ev:
        return ("reused", since) if st_n == row[4] else ("full", None)
    if since > ev or CHANGES not in known:
        return "full", None
    return ("incremental", since) if row[5] == ev - since else ("full", None)


def changed_sessions(con: duckdb.DuckDBPyConnection, since: int, into: str) -> int:
    """Temp table `into` (session_id): the sessions changed after version `since`. Returns how many (the
    row count the CREATE ... AS statement returns: no second statement)."""
    return int(
        one(
            con,
            f"CREATE OR REPLACE TEMP TABLE {into} AS SELECT DISTINCT session_id FROM main.{CHANGES} WHERE version > ?",
            [since],
        )
    )


def put(
    con: duckdb.DuckDBPyConnection,
    name: str,
    key: str,
    inputs: dict[str, Any],
    mode: str,
    n_sessions: int | None = None,
    known: set[str] | None = None,
    state: dict[str, Any] | None = None,
) -> set[str]:
    """Record that `name` now reflects the current events (after a full or incremental run): one UPDATE
    of its row (an INSERT when it has none) reading the counter and the events' count. Returns the tables of main it
    found among stallscan_meta, the stamps and the change log (for prune_changes). known: the tables plan()
    found (its `found`), when the caller has them: no catalog look-up then (a run creates none of the three;
    the stamps' table is created here IF NOT EXISTS when plan did not see it). state: plan()'s `state`, when it
    holds the counter and the events' count it read: they are written as constants (the UPDATE's two scalar
    subqueries cost about 1 CPU ms of its 2-2.5 in a report after one new session)."""
    if known is None:
        known = _existing(con, ["stallscan_meta", STAMPS, CHANGES])
    if "stallscan_meta" not in known:  # not a stallscan database (e.g. a bare connection holding events)
        return known
    if STAMPS not in known:
        con.execute(
            f"CREATE TABLE IF NOT EXISTS main.{STAMPS} (name VARCHAR PRIMARY KEY, key VARCHAR, inputs VARCHAR, "
            "events_version BIGINT, n_events BIGINT, mode VARCHAR, n_full INTEGER, n_incremental INTEGER, "
            "n_reused INTEGER, n_sessions INTEGER, updated_at TIMESTAMPTZ)"
        )
        known = known | {STAMPS}
    params: dict[str, Any] = {
        "name": name,
        "key": key,
        "inputs": json.dumps(inputs, sort_keys=True, default=str),
        "vk": VERSION_KEY,
        "mode": mode,
        "n": n_sessions,
    }
    ev, n = "(SELECT value FROM main.stallscan_meta WHERE key = $vk)::BIGINT", "(SELECT count(*) FROM main.events)"
    if state is not None and "ev" in state and "n" in state:
        ev, n = str(int(state["ev"])), str(int(state["n"]))
        del params["vk"]
    # an UPDATE of the stamp's row when there is one (0.4 CPU ms against 2.4-2.7 for the INSERT OR REPLACE, which
    # checks the primary key's index; 7 stamps after one new session); the INSERT only for a new stamp
    counts = ", ".join(
        f"n_{m} = coalesce(n_{m}, 0) + {1 if mode == m else 0}" for m in ("full", "incremental", "reused")
    )
    updated = con.execute(
        f"UPDATE main.{STAMPS} SET key = $key, inputs = $inputs, events_version = {ev}, n_events = {n}, "
        f"mode = $mode, {counts}, n_sessions = $n::INTEGER, updated_at = now() WHERE name = $name",
        params,
    ).fetchall()[0]
    if updated and updated[0]:
        return known
    con.execute(
        f"INSERT INTO main.{STAMPS} SELECT $name, $key, $inputs, {ev}, {n}, $mode, "
        f"{', '.join('1' if mode == m else '0' for m in ('full', 'incremental', 'reused'))}, $n::INTEGER, now()",
        params,
    )
    return known


def prune_changes(con: duckdb.DuckDBPyConnection, known: set[str] | None = None) -> None:
    """Drop the change log below the oldest stamp (no stamp needs it; an unstamped table replays in full
    anyway). known: the tables put() returned, when the caller has them. Nothing inside pruned_after()."""
    if _DEFERRED[0]:
        return
    if not {CHANGES, STAMPS} <= (known if known is not None else _existing(con, [CHANGES, STAMPS])):
        return
    con.execute(f"DELETE FROM main.{CHANGES} WHERE version <= (SELECT min(events_version) FROM main.{STAMPS})")


# > 0 while pruned_after() runs: the prunes of its block wait for its end
_DEFERRED = [0]


@contextlib.contextmanager
def pruned_after(con: duckdb.DuckDBPyConnection) -> Iterator[None]:
    """The change log pruned once, on `con`, after the block, not by each stamp written inside it: derives on
    several cursors at once (stallscan.report.build's lanes) each see the others' stamps as they were when
    their transaction began, and two prunes of one row from transactions that overlap conflict in DuckDB.
    What is left equals what pruning after each stamp leaves: rows below the oldest stamp, once all are written."""
    _DEFERRED[0] += 1
    try:
        yield
    finally:
        _DEFERRED[0] -= 1
    prune_changes(con)


def forget(con: duckdb.DuckDBPyConnection, name: str) -> None:
    if STAMPS in _existing(con, [STAMPS]):
        con.execute(f"DELETE FROM main.{STAMPS} WHERE name = ?", [name])
