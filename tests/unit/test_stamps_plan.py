"""The derive stamps' decisions on hand-made tables (stallscan.store.stamps): what plan() answers for each state
of the counter, the stamp and the change log, what put() records, and with_state() against those rows. The
expected answers are read from the rows written here, as the module's docstring defines them."""

from __future__ import annotations

import duckdb
import pytest

from stallscan.store import stamps


@pytest.fixture
def con() -> duckdb.DuckDBPyConnection:
    c = duckdb.connect()
    c.execute("CREATE TABLE stallscan_meta (key VARCHAR PRIMARY KEY, value VARCHAR)")
    c.execute("CREATE TABLE events (session_id VARCHAR)")
    c.execute("INSERT INTO events VALUES ('a'), ('a'), ('b')")  # 3 events
    c.execute("CREATE TABLE out_t (session_id VARCHAR)")  # the group's output table
    return c


def _version(con: duckdb.DuckDBPyConnection, v: int) -> None:
    con.execute("INSERT OR REPLACE INTO stallscan_meta VALUES ('events_version', ?)", [str(v)])


def _log(con: duckdb.DuckDBPyConnection, *rows: tuple[int, str]) -> None:
    con.execute("CREATE TABLE IF NOT EXISTS events_changes (version BIGINT NOT NULL, session_id VARCHAR NOT NULL)")
    con.executemany("INSERT INTO events_changes VALUES (?, ?)", list(rows))


def test_no_counter_means_full(con: duckdb.DuckDBPyConnection) -> None:
    assert stamps.plan(con, "g", "k", ("out_t",)) == ("full", None)
    assert stamps.with_state(con, "g") == (None, None, 3)


def test_put_then_reuse_and_its_row(con: duckdb.DuckDBPyConnection) -> None:
    _version(con, 3)
    assert stamps.plan(con, "g", "k", ("out_t",)) == ("full", None)  # no stamp yet
    known = stamps.put(con, "g", "k", {"x": 1}, "full")
    assert {"stallscan_meta", "derive_stamps"} <= known
    row = con.execute(
        "SELECT key, inputs, events_version, n_events, mode, n_full, n_incremental, n_reused, n_sessions "
        "FROM derive_stamps WHERE name = 'g'"
    ).fetchone()
    assert row == ("k", '{"x": 1}', 3, 3, "full", 1, 0, 0, None)
    assert stamps.plan(con, "g", "k", ("out_t",)) == ("reused", 3)
    assert stamps.plan(con, "g", "other key", ("out_t",)) == ("full", None)
    assert stamps.plan(con, "g", "k", ("out_t", "missing_t")) == ("full", None)
    st, ev, n = stamps.with_state(con, "g")
    assert (ev, n) == (3, 3)
    assert st is not None and st["key"] == "k" and st["inputs"] == {"x": 1} and st["n_full"] == 1
    assert stamps.with_state(con, "nothing") == (None, 3, 3)


def test_events_written_past_ingest_mean_full(con: duckdb.DuckDBPyConnection) -> None:
    _version(con, 3)
    stamps.put(con, "g", "k", {}, "full")
    con.execute("INSERT INTO events VALUES ('c')")  # same counter, one more event
    assert stamps.plan(con, "g", "k", ("out_t",)) == ("full", None)


def test_incremental_needs_every_version_logged(con: duckdb.DuckDBPyConnection) -> None:
    _version(con, 1)
    stamps.put(con, "g", "k", {}, "full")
    _version(con, 3)
    assert stamps.plan(con, "g", "k", ("out_t",)) == ("full", None)  # no change log at all
    _log(con, (3, "b"))
    assert stamps.plan(con, "g", "k", ("out_t",)) == ("full", None)  # version 2 missing from the log
    _log(con, (2, "a"), (2, "b"), (1, "a"))
    assert stamps.plan(con, "g", "k", ("out_t",)) == ("incremental", 1)
    assert stamps.changed_sessions(con, 1, "changed_t") == 2  # a and b, changed after version 1
    assert sorted(r[0] for r in con.execute("SELECT session_id FROM changed_t").fetchall()) == ["a", "b"]
    stamps.put(con, "g", "k", {}, "incremental", n_sessions=2)
    row = con.execute("SELECT events_version, mode, n_full, n_incremental, n_sessions FROM derive_stamps").fetchone()
    assert row == (3, "incremental", 1, 1, 2)
    stamps.prune_changes(con)  # every version up to the oldest stamp's (3) goes
    assert con.execute("SELECT count(*) FROM events_changes").fetchone() == (0,)


def test_a_stamp_ahead_of_the_counter_means_full(con: duckdb.DuckDBPyConnection) -> None:
    _version(con, 5)
    stamps.put(con, "g", "k", {}, "full")
    _version(con, 4)
    _log(con, (5, "a"))
    assert stamps.plan(con, "g", "k", ("out_t",)) == ("full", None)


def test_plan_state_and_a_put_of_its_constants_write_the_same_stamp(con: duckdb.DuckDBPyConnection) -> None:
    """plan()'s state (the counter, the events' count, the stamp's count and the sample's sessions it read) given
    to put() writes the row a put() reading them again writes, for an UPDATE of a stamp and for a new stamp's
    INSERT alike."""
    _version(con, 1)
    stamps.put(con, "g", "k", {}, "full")
    stamps.put(con, "h", "k", {}, "full")
    _version(con, 3)
    _log(con, (2, "a"), (3, "b"))
    con.execute("INSERT INTO events VALUES ('c')")  # 4 events, 3 sessions
    state: dict[str, object] = {}
    assert stamps.plan(con, "g", "k", ("out_t",), state=state, sample_rows=8192) == ("incremental", 1)
    assert state == {"ev": 3, "n": 4, "sample": 3, "n_stamp": 3}  # (n_stamp: the events' count the stamp holds)
    state2: dict[str, object] = {}
    assert stamps.plan(con, "h", "k", ("out_t",), state=state2, sample_rows=2) == ("incremental", 1)
    assert state2["sample"] == 1  # (rowid < 2: the two events of session a)
    stamps.put(con, "g", "k", {}, "incremental", 2, state=state)
    stamps.put(con, "h", "k", {}, "incremental", 2)
    cols = "key, inputs, events_version, n_events, mode, n_full, n_incremental, n_reused, n_sessions"
    rows = con.execute(f"SELECT name, {cols} FROM derive_stamps ORDER BY name").fetchall()
    assert rows[0][1:] == rows[1][1:] == ("k", "{}", 3, 4, "incremental", 1, 1, 0, 2)
    fresh: dict[str, object] = {}
    assert stamps.plan(con, "new", "k", ("out_t", "missing_t"), state=fresh) == ("full", None)
    assert fresh == {"ev": 3, "n": 4, "sample": None, "n_stamp": None}  # (no sample asked for, no stamp)
    stamps.put(con, "new", "k", {}, "full", state=fresh)  # (a new stamp: the INSERT, with the same constants)
    stamps.put(con, "new2", "k", {}, "full")
    new = "SELECT events_version, n_events, mode, n_full FROM derive_stamps WHERE name = ?"
    assert con.execute(new, ["new"]).fetchone() == con.execute(new, ["new2"]).fetchone() == (3, 4, "full", 1)
