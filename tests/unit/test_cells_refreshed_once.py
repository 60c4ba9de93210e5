"""stallscan.report.summary_cells.refresh_boundaries inside a report's block (stamps.kept_tables): a second call
on the same connection from the same turn_boundaries stamp (the threshold section's count of the tool results
left out, after the boundaries section) refreshes nothing and makes no macro again; another stamp, another
connection, a first call that made no macro, no stamp, or a call outside the block do."""

from __future__ import annotations

from typing import Any

import duckdb
import pytest

from stallscan.report import summary_cells
from stallscan.store import sql, stamps


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    seen: dict[str, Any] = {"refresh": 0, "macro": 0, "key": "k1"}

    def refresh(con: duckdb.DuckDBPyConnection, entry: Any, inputs: dict[str, Any]) -> str:
        assert inputs == {"boundaries": seen["key"]}
        seen["refresh"] += 1
        return "incremental"

    def run(con: duckdb.DuckDBPyConnection, name: str, params: Any = None) -> None:
        assert name == "report/scoped_boundary_cells"
        seen["macro"] += 1

    monkeypatch.setattr(summary_cells, "_refresh", refresh)
    monkeypatch.setattr(summary_cells, "_upstream_key", lambda con, name: seen["key"])
    monkeypatch.setattr(sql, "run", run)
    return seen


def test_a_second_call_from_the_same_stamp_does_nothing(calls: dict[str, Any]) -> None:
    con = duckdb.connect()
    with stamps.kept_tables():
        assert summary_cells.refresh_boundaries(con, scoped=True) == "incremental"
        assert summary_cells.refresh_boundaries_scoped(con) == "reused"
        assert summary_cells.refresh_boundaries(con) == "reused"
    assert (calls["refresh"], calls["macro"]) == (1, 1)


def test_what_still_refreshes(calls: dict[str, Any]) -> None:
    con, other = duckdb.connect(), duckdb.connect()
    with stamps.kept_tables():
        summary_cells.refresh_boundaries(con)
        summary_cells.refresh_boundaries(con, scoped=True)  # (no macro made by the first call)
        assert (calls["refresh"], calls["macro"]) == (2, 1)
        summary_cells.refresh_boundaries(other, scoped=True)  # (another connection)
        assert (calls["refresh"], calls["macro"]) == (3, 2)
        calls["key"] = "k2"  # (turn_boundaries stamped again)
        summary_cells.refresh_boundaries(con, scoped=True)
        assert (calls["refresh"], calls["macro"]) == (4, 3)
        calls["key"] = None  # (no stamp: never skipped)
        summary_cells.refresh_boundaries(con, scoped=True)
        summary_cells.refresh_boundaries(con, scoped=True)
        assert (calls["refresh"], calls["macro"]) == (6, 5)
    calls["key"] = "k2"
    summary_cells.refresh_boundaries(con, scoped=True)  # (outside the block: each call)
    summary_cells.refresh_boundaries(con, scoped=True)
    assert (calls["refresh"], calls["macro"]) == (8, 7)


def test_the_session_cells_once_a_block(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[str] = []

    def refresh(con: duckdb.DuckDBPyConnection, entry: Any, inputs: dict[str, Any]) -> str:
        seen.append(entry.name)
        return "incremental"

    monkeypatch.setattr(summary_cells, "_refresh", refresh)
    con = duckdb.connect()
    cur = con.cursor()
    with stamps.kept_tables():
        assert summary_cells.refresh_sessions(con) == "incremental"
        assert summary_cells.refresh_sessions(cur) == "reused"  # (another connection of the block: the same data)
    assert summary_cells.refresh_sessions(cur) == "incremental"  # (outside the block: each call)
    with stamps.kept_tables():
        assert summary_cells.refresh_sessions(cur) == "incremental"
    assert seen == ["session_cells"] * 3
    cur.close()
