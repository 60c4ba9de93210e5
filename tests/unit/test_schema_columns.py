"""The schema check's expected columns (stallscan.store.schema_check._expected_columns): found from
queries/store/schema.sql by temp tables on a command's first connection, then kept as JSON in the cache directory
for that schema file and DuckDB version, and read from there by later commands; a missing, broken or unwritable
copy only means finding them again."""

from __future__ import annotations

import os
from pathlib import Path

import duckdb
import pytest

from stallscan.store import schema_check


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("STALLSCAN_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(schema_check, "_EXPECTED", [])  # (a new process: nothing found yet)
    return tmp_path / "cache"


def _no_finding(monkeypatch: pytest.MonkeyPatch) -> None:
    def refused(*_a: object) -> None:
        raise AssertionError("the columns were found again, not read from the kept copy")

    monkeypatch.setattr(schema_check, "_expected_here", refused)
    monkeypatch.setattr(schema_check, "_expected_apart", refused)


def test_found_once_then_read_from_the_kept_copy(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    truth = schema_check._expected_apart()  # (a separate in-memory database: what schema.sql makes)
    con = duckdb.connect()
    assert schema_check._expected_columns(con) == truth
    kept = Path(schema_check._kept_path())
    assert kept.parent == cache and schema_check.schema_sha() in kept.name and duckdb.__version__ in kept.name
    assert kept.is_file()
    monkeypatch.setattr(schema_check, "_EXPECTED", [])  # (the next command)
    _no_finding(monkeypatch)
    assert schema_check._expected_columns(duckdb.connect()) == truth


@pytest.mark.parametrize("text", ["", "{not json", '{"events": [["event_id", "VARCHAR"]]}', "[1, 2]"])
def test_a_broken_or_partial_copy_is_found_again_and_rewritten(cache: Path, text: str) -> None:
    truth = schema_check._expected_apart()
    cache.mkdir()
    Path(schema_check._kept_path()).write_text(text, encoding="utf-8")
    assert schema_check._kept_columns() is None
    assert schema_check._expected_columns(duckdb.connect()) == truth
    assert schema_check._kept_columns() == truth


def test_an_unwritable_cache_still_answers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("", encoding="utf-8")
    monkeypatch.setenv("STALLSCAN_CACHE", str(blocker / "cache"))  # (a directory under a file: never made)
    monkeypatch.setattr(schema_check, "_EXPECTED", [])
    assert schema_check._expected_columns(duckdb.connect()) == schema_check._expected_apart()
    assert not os.path.exists(schema_check._kept_path())


def test_another_schema_file_is_kept_apart(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    schema_check._expected_columns(duckdb.connect())
    monkeypatch.setattr(schema_check, "schema_sha", lambda: "0" * 16)
    assert schema_check._kept_columns() is None  # (another name: its columns are found, not read)


def test_the_temp_tables_answer_the_same(tmp_path: Path) -> None:
    con = duckdb.connect(str(tmp_path / "x.duckdb"))
    try:
        assert schema_check._expected_here(con) == schema_check._expected_apart()
    finally:
        con.close()
