"""The optimizer rule and the insertion order the rounds statement turns off (queries/replay/stall_rounds.sql,
the order for its connection only) are back on after a
failure of that statement, whether it ran on its own (a full replay) or inside a transaction (an incremental
one: the transaction is aborted, so the clean-up comes with sql.rollback)."""

from __future__ import annotations

from typing import Any

import duckdb
import pytest

from stallscan.ingest.run import ingest_paths
from stallscan.replay import stalls
from stallscan.store import sql
from stallscan.store.db import connect
from tests.helpers import SAMPLES

OFF = "SET disabled_optimizers = 'build_side_probe_side'"
UNORDERED = "SET SESSION preserve_insertion_order = false"


def _setting(con: duckdb.DuckDBPyConnection) -> str:
    row = con.execute("SELECT current_setting('disabled_optimizers')").fetchone()
    assert row is not None
    return str(row[0])


def _ordered(con: duckdb.DuckDBPyConnection) -> bool:
    row = con.execute("SELECT current_setting('preserve_insertion_order')").fetchone()
    assert row is not None
    return bool(row[0])


def test_rounds_statement_failure_leaves_the_optimizer_on(monkeypatch: pytest.MonkeyPatch) -> None:
    con = connect(":memory:")
    ingest_paths(con, [str(SAMPLES / "opencode")])
    real_run = sql.run

    def failing_run(c: duckdb.DuckDBPyConnection, name: str, params: dict[str, Any] | None = None) -> None:
        if name == "replay/stall_rounds":  # as the file does: the rule off, then its statement fails
            c.execute(OFF)
            c.execute(UNORDERED)
            c.execute("SELECT error('the rounds statement failed')")
        real_run(c, name, params)

    monkeypatch.setattr(sql, "run", failing_run)  # (the module stalls.py calls it through)
    with pytest.raises(duckdb.Error, match="the rounds statement failed"):
        stalls.replay_stalls(con)
    assert _setting(con) == ""
    assert _ordered(con)
    monkeypatch.setattr(sql, "run", real_run)
    stalls.replay_stalls(con)  # and the connection still replays
    assert _setting(con) == ""
    assert _ordered(con)  # (the file's own RESET after its statement)
    # nor does a replay leave its session variables (stall_rounds_prep.sql's limits) on the caller's connection
    assert con.execute("SELECT name FROM duckdb_variables() WHERE name LIKE 'stall%'").fetchall() == []
    con.close()


def test_rollback_turns_the_rule_back_on_in_an_aborted_transaction() -> None:
    con = duckdb.connect()
    con.execute("BEGIN TRANSACTION")
    con.execute(OFF)
    con.execute(UNORDERED)
    with pytest.raises(duckdb.Error):
        con.execute("SELECT error('boom')")
    sql.rollback(con)
    assert _setting(con) == ""
    assert _ordered(con)
    con.close()
