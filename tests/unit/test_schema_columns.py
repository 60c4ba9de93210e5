"""stallscan.store.schema_columns: the base tables' columns kept for queries/store/schema.sql are the columns that
file makes (as the schema check found them before: temp tables read from the catalog), and the check uses them
only for that file and DuckDB version."""

from __future__ import annotations

import duckdb
import pytest

from stallscan.store import schema_check, schema_columns


def test_the_kept_columns_are_for_this_schema_file() -> None:
    found = schema_check._expected_apart()
    assert schema_check.schema_sha() == schema_columns.SCHEMA_SHA, (
        "queries/store/schema.sql changed: write stallscan/store/schema_columns.py anew with "
        f"SCHEMA_SHA = {schema_check.schema_sha()!r}, DUCKDB = {duckdb.__version__!r}, COLUMNS = {found!r}"
    )
    if duckdb.__version__ == schema_columns.DUCKDB:
        assert found == schema_columns.COLUMNS
        assert schema_check._kept_columns() == found


def test_the_temp_tables_answer_the_same(tmp_path) -> None:
    con = duckdb.connect(str(tmp_path / "x.duckdb"))
    try:
        assert schema_check._expected_here(con) == schema_check._expected_apart()
    finally:
        con.close()


def test_another_duckdb_version_finds_them_again(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(schema_columns, "DUCKDB", "0.0.0")
    assert schema_check._kept_columns() is None
    monkeypatch.setattr(schema_columns, "DUCKDB", duckdb.__version__)
    monkeypatch.setattr(schema_columns, "SCHEMA_SHA", "0" * 16)
    assert schema_check._kept_columns() is None
