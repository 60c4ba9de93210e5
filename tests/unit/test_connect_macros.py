"""A connection that only ingests opens without the report's temp macros; every other has them."""

from __future__ import annotations

import duckdb
import pytest

from stallscan.store.db import connect, cursor


def _macros(con: duckdb.DuckDBPyConnection) -> set[str]:
    rows = con.execute(
        "SELECT function_name FROM duckdb_functions() WHERE function_type = 'macro' AND schema_name = 'main' AND database_name = 'temp'"
    )
    return {r[0] for r in rows.fetchall()} & {"redact", "secret_leaks", "truth", "truth_note"}


def test_an_ingest_connection_has_no_report_macros_and_the_next_connection_has_them(tmp_path):
    db = str(tmp_path / "m.duckdb")
    bare = connect(db, macros=False)
    assert _macros(bare) == set()
    full = connect(db, checked=True)  # (the build's connection, opened while the ingest's is held)
    bare.close()
    assert _macros(full) == {"redact", "secret_leaks", "truth", "truth_note"}
    assert _macros(cursor(full)) == {"redact", "secret_leaks", "truth", "truth_note"}
    assert full.execute("SELECT redact('key sk-ant-api03-' || repeat('a', 90))").fetchone()[0] != ""
    full.close()


def test_without_macros_the_settings_are_the_same(tmp_path):
    db = str(tmp_path / "s.duckdb")
    bare = connect(db, macros=False)
    got = bare.execute("SELECT current_setting('TimeZone'), current_setting('enable_progress_bar')").fetchone()
    bare.close()
    full = connect(db)
    want = full.execute("SELECT current_setting('TimeZone'), current_setting('enable_progress_bar')").fetchone()
    full.close()
    assert got == want == ("UTC", False)
    with pytest.raises(duckdb.Error):
        connect(":memory:", macros=False).execute("SELECT truth('x', true)")
