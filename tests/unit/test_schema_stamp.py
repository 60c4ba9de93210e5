"""store.db.connect runs queries/store/schema.sql on a write connection only when the database's schema stamp is not
this code's or a base table or the sessions view is missing; the column check runs either way."""

from __future__ import annotations

import duckdb
import pytest

from stallscan.store import sql
from stallscan.store.db import connect
from stallscan.store.errors import SchemaError
from stallscan.store.schema_check import SCHEMA_STAMP_KEY, schema_stamp


def _schema_runs(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    ran: list[str] = []
    real = sql.run

    def run(con, name, params=None):
        if name == "store/schema":
            ran.append(name)
        return real(con, name, params)

    monkeypatch.setattr(sql, "run", run)
    return ran


def test_the_schema_file_runs_once_then_only_when_needed(tmp_path, monkeypatch):
    path = tmp_path / "s.duckdb"
    ran = _schema_runs(monkeypatch)
    connect(path).close()
    assert len(ran) == 1
    con = connect(path)
    assert con.execute("SELECT value FROM stallscan_meta WHERE key = ?", [SCHEMA_STAMP_KEY]).fetchone() == (
        schema_stamp(),
    )
    con.close()
    assert len(ran) == 1  # (stamped: not again)
    raw = duckdb.connect(str(path))
    raw.execute("DROP VIEW sessions")
    raw.close()
    con = connect(path)
    assert con.execute("SELECT count(*) FROM sessions").fetchone() == (0,)  # (made again: the view was missing)
    con.close()
    assert len(ran) == 2
    raw = duckdb.connect(str(path))
    raw.execute("DROP MACRO is_blank")
    raw.execute("UPDATE stallscan_meta SET value = 'other' WHERE key = ?", [SCHEMA_STAMP_KEY])
    raw.close()
    con = connect(path)
    assert con.execute("SELECT is_blank('  ')").fetchone() == (True,)  # (another stamp: the file ran again)
    con.close()
    assert len(ran) == 3
    connect(path, read_only=True).close()
    assert len(ran) == 3


def test_a_stamped_database_with_a_changed_column_is_still_refused(tmp_path):
    path = tmp_path / "s.duckdb"
    connect(path).close()
    raw = duckdb.connect(str(path))
    raw.execute("DROP VIEW sessions")
    raw.execute("ALTER TABLE events DROP COLUMN meta")
    raw.close()
    with pytest.raises(SchemaError, match="events lacks meta"):
        connect(path)
