"""$STALLSCAN_ROW_GROUP_SIZE: a write connection's database file attached with row groups of that many rows, selected
so that every connection and cursor of it sees the catalog a plain connection sees (stallscan.store.db._open)."""

from __future__ import annotations

import shutil
from pathlib import Path

import duckdb
import pytest

from stallscan.ingest.run import ingest_paths
from stallscan.report.build import _checkpoint_beside
from stallscan.store.db import ROW_GROUP_SIZE, connect, cursor, plain_cursor, row_group_size

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs"


def _groups(con: duckdb.DuckDBPyConnection, table: str) -> int:
    return int(con.execute(f"SELECT count(DISTINCT row_group_id) FROM pragma_storage_info('{table}')").fetchall()[0][0])


def _rows(con: duckdb.DuckDBPyConnection, table: str) -> list[tuple[object, ...]]:
    drop = " EXCLUDE (ingested_at)" if table == "files" else ""  # (the time of the ingest)
    return sorted(con.execute(f"SELECT *{drop} FROM {table}").fetchall(), key=repr)


@pytest.mark.parametrize("value", [None, "", "0", "100", "many"])
def test_unset_or_too_small_keeps_the_default(monkeypatch, value):
    if value is None:
        monkeypatch.delenv("STALLSCAN_ROW_GROUP_SIZE", raising=False)
    else:
        monkeypatch.setenv("STALLSCAN_ROW_GROUP_SIZE", value)
    assert row_group_size() == ROW_GROUP_SIZE


def test_every_connection_and_cursor_sees_the_files_catalog(monkeypatch, tmp_path):
    monkeypatch.setenv("STALLSCAN_ROW_GROUP_SIZE", "16384")
    db = str(tmp_path / "rg.duckdb")
    con = connect(db)
    con.execute("CREATE TABLE t AS SELECT range AS i FROM range(40000)")
    second = connect(db, checked=True)  # (the build's connection, opened while the ingest's is held)
    made = [con, second, cursor(con), cursor(cursor(con)), plain_cursor(con), plain_cursor(second)]
    for c in made:
        assert c.execute("SELECT current_database(), count(*) FROM t").fetchall() == [("rg", 40000)]
    assert _groups(con, "t") == 3  # 40,000 rows in groups of 16,384
    for c in reversed(made):
        c.close()
    plain = duckdb.connect(db)  # the file as DuckDB opens it: the rows and their groups as written
    assert plain.execute("SELECT count(*), sum(i) FROM t").fetchall() == [(40000, 40000 * 39999 // 2)]
    assert _groups(plain, "t") == 3
    plain.close()


def test_read_only_and_in_memory_connections_are_opened_plainly(monkeypatch, tmp_path):
    monkeypatch.setenv("STALLSCAN_ROW_GROUP_SIZE", "16384")
    db = str(tmp_path / "ro.duckdb")
    connect(db).close()
    for con in (connect(db, read_only=True), connect(":memory:")):
        assert con.execute("SELECT count(*) FROM duckdb_databases() WHERE NOT internal").fetchall() == [(1,)]
        con.close()


def test_the_checkpoint_beside_writes_the_files_catalog(monkeypatch, tmp_path):
    monkeypatch.setenv("STALLSCAN_ROW_GROUP_SIZE", "16384")
    db = tmp_path / "cp.duckdb"
    con = connect(str(db))
    con.execute("SET checkpoint_threshold = '1GB'")
    con.execute("CREATE TABLE t (i INTEGER)")
    con.execute("INSERT INTO t VALUES (1), (2)")
    assert Path(str(db) + ".wal").stat().st_size > 0
    with _checkpoint_beside(con):
        pass
    assert not Path(str(db) + ".wal").exists() or Path(str(db) + ".wal").stat().st_size == 0
    con.close()


def test_a_database_written_with_duckdbs_groups_opens_reads_and_appends(monkeypatch, tmp_path):
    """An existing database (122,880-row groups) ingested into with smaller groups holds what one written with
    DuckDB's groups holds after the same two ingests."""
    first, second = tmp_path / "in1", tmp_path / "in2"
    shutil.copytree(SAMPLES / "claude-code", first)
    shutil.copytree(SAMPLES / "codex", second)
    monkeypatch.delenv("STALLSCAN_ROW_GROUP_SIZE", raising=False)
    old, ref = str(tmp_path / "old.duckdb"), str(tmp_path / "ref.duckdb")
    for db in (old, ref):
        con = connect(db, macros=False)
        ingest_paths(con, [str(first)])
        con.close()
    con = connect(ref, macros=False)
    ingest_paths(con, [str(second)])
    con.close()
    monkeypatch.setenv("STALLSCAN_ROW_GROUP_SIZE", "2048")
    con = connect(old, macros=False)
    before = con.execute("SELECT count(*) FROM events").fetchall()[0][0]
    assert before > 0
    ingest_paths(con, [str(second)])
    con.close()
    a, b = duckdb.connect(old, read_only=True), duckdb.connect(ref, read_only=True)
    assert a.execute("SELECT count(*) FROM events").fetchall()[0][0] > before
    for table in ("events", "files"):
        assert _rows(a, table) == _rows(b, table), table
    a.close()
    b.close()
