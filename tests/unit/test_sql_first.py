"""store.sql.first and the one-row reads: a result read to its end, so the connection takes a register() after it
(a result left open by fetchone() makes DuckDB refuse one: docs/benchmarks.md, "lead23")."""

from __future__ import annotations

import duckdb
import pyarrow as pa
import pytest

from stallscan.store import sql, stamps


@pytest.fixture
def con():
    c = duckdb.connect()
    yield c
    c.close()


def test_first_gives_the_first_row_or_none(con):
    assert sql.first(con.execute("SELECT range AS i, range * 2 FROM range(3, 9)")) == (3, 6)
    assert sql.first(con.execute("SELECT 1 WHERE false")) is None


def test_a_register_after_first_is_taken(con):
    sql.first(con.execute("SELECT * FROM range(200000)"))  # (more than a chunk: fetchone() would leave the rest)
    con.register("t", pa.table({"a": [1, 2]}))
    assert con.execute("SELECT sum(a) FROM t").fetchall() == [(3,)]


def test_a_register_after_a_fetchone_is_refused(con):
    """What first() is for: DuckDB refuses it after fetchone() (if this stops failing, the helper is moot)."""
    con.execute("SELECT * FROM range(200000)").fetchone()
    with pytest.raises(duckdb.Error, match="unfinished result"):
        con.register("t", pa.table({"a": [1]}))


def test_stamps_one_reads_its_result_to_the_end(con):
    assert stamps.one(con, "SELECT max(range) FROM range(200000)") == 199999
    assert stamps.one(con, "SELECT $n + 1", {"n": 41}) == 42
    con.register("t", pa.table({"a": [1]}))
