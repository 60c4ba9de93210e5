"""stallscan.store.stamps.kept_tables: inside the block the tables of main a connection's first catalog look-up
found answer the later look-ups (the plans of a report's derived groups) without a catalog query; a table not
found is looked up again; a look-up made from an incremental run's scratch keeps nothing; outside the block only
the STABLE tables are kept, so a table dropped between two calls is seen missing."""

from __future__ import annotations

from typing import Any

import duckdb
import pytest

from stallscan.store import sql, stamps
from stallscan.store.db import SCRATCH_NAMES


@pytest.fixture
def con() -> duckdb.DuckDBPyConnection:
    c = duckdb.connect()
    c.execute("CREATE TABLE stallscan_meta (key VARCHAR PRIMARY KEY, value VARCHAR)")
    c.execute("INSERT INTO stallscan_meta VALUES ('events_version', '3')")
    c.execute("CREATE TABLE events (session_id VARCHAR)")
    c.execute("INSERT INTO events VALUES ('a'), ('b')")
    c.execute("CREATE TABLE events_changes (version BIGINT NOT NULL, session_id VARCHAR NOT NULL)")
    c.execute("CREATE TABLE out_a (session_id VARCHAR)")
    c.execute("CREATE VIEW out_b AS SELECT * FROM out_a")
    stamps.put(c, "g", "k", {}, "full")
    return c


@pytest.fixture
def looked(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    real = sql._catalog

    def counted(c: duckdb.DuckDBPyConnection) -> Any:
        calls.append(1)
        return real(c)

    monkeypatch.setattr(sql, "_catalog", counted)
    return calls


def test_inside_the_block_one_look_up_answers_the_plans(con: duckdb.DuckDBPyConnection, looked: list[int]) -> None:
    with stamps.kept_tables():
        assert stamps.plan(con, "g", "k", ("out_a",)) == ("reused", 3)
        first = len(looked)
        assert stamps.plan(con, "g", "k", ("out_a", "out_b")) == ("reused", 3)
        assert stamps.with_state(con, "g")[1:] == (3, 2)
        assert len(looked) == first  # (tables and views of main, both kept)


def test_a_missing_table_is_looked_up_again(con: duckdb.DuckDBPyConnection, looked: list[int]) -> None:
    with stamps.kept_tables():
        assert stamps.plan(con, "g", "k", ("out_a", "out_c")) == ("full", None)
        n = len(looked)
        con.execute("CREATE TABLE out_c (session_id VARCHAR)")
        assert stamps.plan(con, "g", "k", ("out_a", "out_c")) == ("reused", 3)
        assert len(looked) == n + 1


def test_outside_the_block_a_dropped_table_is_seen(con: duckdb.DuckDBPyConnection) -> None:
    with stamps.kept_tables():
        assert stamps.plan(con, "g", "k", ("out_a",)) == ("reused", 3)
    con.execute("DROP VIEW out_b")
    con.execute("DROP TABLE out_a")
    assert stamps.plan(con, "g", "k", ("out_a",)) == ("full", None)
    with stamps.kept_tables():  # (a new block asks the catalog again)
        assert stamps.plan(con, "g", "k", ("out_a",)) == ("full", None)


def test_blocks_nest_and_the_outer_one_ends_the_keeping(con: duckdb.DuckDBPyConnection, looked: list[int]) -> None:
    with stamps.kept_tables():
        with stamps.kept_tables():
            stamps.plan(con, "g", "k", ("out_a",))
        n = len(looked)
        stamps.plan(con, "g", "k", ("out_a",))
        assert len(looked) == n  # (still kept after the inner block)
    stamps.plan(con, "g", "k", ("out_a",))
    assert len(looked) == n + 1


def test_a_look_up_from_a_scratch_keeps_nothing(con: duckdb.DuckDBPyConnection, looked: list[int]) -> None:
    s = SCRATCH_NAMES[0]
    con.execute(f"ATTACH ':memory:' AS {s}")
    con.execute(f"CREATE TABLE {s}.out_s (session_id VARCHAR)")
    with stamps.kept_tables():
        con.execute(f"SET search_path = '{s}.main'")
        assert "out_s" in stamps._existing(con, ["out_s"])  # (the scratch's main, as the catalog answers there)
        con.execute("RESET search_path")
        n = len(looked)
        assert stamps._existing(con, ["out_s"]) == set()  # (not kept: asked again, not in this database's main)
        assert len(looked) == n + 1


def test_each_connection_keeps_its_own(con: duckdb.DuckDBPyConnection, looked: list[int]) -> None:
    other = con.cursor()
    with stamps.kept_tables():
        stamps.plan(con, "g", "k", ("out_a",))
        n = len(looked)
        assert stamps.plan(other, "g", "k", ("out_a",)) == ("reused", 3)
        assert len(looked) == n + 1
    other.close()


def test_a_cursor_starts_with_what_its_connection_kept(con: duckdb.DuckDBPyConnection, looked: list[int]) -> None:
    with stamps.kept_tables():
        stamps.plan(con, "g", "k", ("out_a",))
        other = con.cursor()
        stamps.kept_for(other, con)
        n = len(looked)
        assert stamps.plan(other, "g", "k", ("out_a", "out_b")) == ("reused", 3)
        assert len(looked) == n
    other.close()


def test_the_events_state_is_read_once_inside_the_block(con: duckdb.DuckDBPyConnection) -> None:
    with stamps.kept_tables():
        assert stamps.with_state(con) == (None, 3, 2)
        con.execute("INSERT INTO events VALUES ('c')")  # (nothing in a report's block writes events: unseen here)
        con.execute("UPDATE stallscan_meta SET value = '4' WHERE key = 'events_version'")
        assert stamps.with_state(con) == (None, 3, 2)
        assert stamps.events_version(con) == 3
        assert stamps.with_state(con, "g")[1:] == (4, 3)  # (a stamp's row is read, and the state with it)
    assert stamps.with_state(con) == (None, 4, 3)  # (outside the block: read each time)
    assert stamps.events_version(con) == 4


def test_the_plan_keeps_the_events_state(con: duckdb.DuckDBPyConnection) -> None:
    with stamps.kept_tables():
        assert stamps.plan(con, "g", "k", ("out_a",)) == ("reused", 3)
        con.execute("INSERT INTO events VALUES ('c')")  # (unseen: the plan's read answers)
        assert stamps.with_state(con) == (None, 3, 2)
        assert stamps.events_version(con) == 3


def test_the_events_count_once_read_inside_the_block(con: duckdb.DuckDBPyConnection) -> None:
    with stamps.kept_tables():
        assert stamps.n_events(con) == 2  # (nothing read yet: counted)
        stamps.plan(con, "g", "k", ("out_a",))
        con.execute("INSERT INTO events VALUES ('c')")
        assert stamps.n_events(con) == 2  # (the plan's count)
    assert stamps.n_events(con) == 3


def test_the_events_state_read_from_a_scratch_is_not_kept(con: duckdb.DuckDBPyConnection) -> None:
    # an incremental run's in-memory scratch holds a copy of the changed sessions' events and no stallscan_meta:
    # what with_state reads there (no counter, the copy's count) must not answer for the database afterwards
    s = SCRATCH_NAMES[0]
    con.execute(f"ATTACH ':memory:' AS {s}")
    con.execute(f"CREATE TABLE {s}.events AS SELECT * FROM events WHERE session_id = 'a'")
    with stamps.kept_tables():
        con.execute(f"SET search_path = '{s}.main'")
        assert stamps.with_state(con)[1:] == (None, 1)  # (the scratch's own answer)
        con.execute("RESET search_path")
        assert stamps.with_state(con)[1:] == (3, 2)
        assert stamps.n_events(con) == 2
