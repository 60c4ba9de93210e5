"""$STALLSCAN_THREADS: DuckDB's worker threads on every connection stallscan.store.db opens (docs/replay-scan.md)."""

from __future__ import annotations

import duckdb
import pytest

from stallscan.store.db import connect


def _threads(con: duckdb.DuckDBPyConnection) -> int:
    row = con.execute("SELECT current_setting('threads')").fetchone()
    assert row is not None
    return int(row[0])


@pytest.mark.parametrize("value", ["1", "3"])
def test_the_variable_sets_the_threads(monkeypatch, tmp_path, value):
    monkeypatch.setenv("STALLSCAN_THREADS", value)
    for target in (":memory:", str(tmp_path / "t.duckdb")):
        con = connect(target)
        assert _threads(con) == int(value), target
        con.close()


@pytest.mark.parametrize("value", [None, "", "0", "many", "-2"])
def test_unset_or_not_a_positive_count_keeps_duckdbs_default(monkeypatch, value):
    if value is None:
        monkeypatch.delenv("STALLSCAN_THREADS", raising=False)
    else:
        monkeypatch.setenv("STALLSCAN_THREADS", value)
    plain = duckdb.connect(":memory:")
    con = connect(":memory:")
    assert _threads(con) == _threads(plain)  # what DuckDB starts with on this machine
    con.close()
    plain.close()
