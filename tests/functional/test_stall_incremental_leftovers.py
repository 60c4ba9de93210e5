"""An incremental stall replay (a few changed sessions, in the derive's scratch) leaves the database's views and
stall_replay_info as the full replay made them and nothing of its own on the connection: no temp table, no
variable (stallscan.replay.stalls._compute drops them in one call at its end)."""

from __future__ import annotations

import shutil

from stallscan.ingest.run import ingest_paths
from stallscan.replay import derive
from stallscan.replay.stalls import VIEWS, replay_stalls
from stallscan.store import stamps
from stallscan.store.db import connect
from tests.helpers import claude_line, write_lines


def _leftovers(con) -> tuple[list[str], list[str]]:
    tables = con.execute(
        "SELECT table_name FROM duckdb_tables() WHERE temporary AND table_name LIKE 'stall%' ORDER BY 1"
    ).fetchall()
    variables = con.execute("SELECT name FROM duckdb_variables() WHERE name LIKE 'stall%' ORDER BY 1").fetchall()
    return [t for (t,) in tables], [v for (v,) in variables]


def test_incremental_leaves_views_info_and_nothing_temporary(tmp_path, monkeypatch, sample_ingested_file):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("STALLSCAN_CONFIG", raising=False)
    monkeypatch.setattr(derive, "FULL_SHARE", 1.01)  # incremental however many sessions changed
    shutil.copy(sample_ingested_file, tmp_path / "d.duckdb")
    con = connect(str(tmp_path / "d.duckdb"))
    replay_stalls(con)
    assert stamps.get(con, "stalls")["mode"] == "full"
    info = con.execute("SELECT * FROM stall_replay_info").fetchall()
    assert _leftovers(con) == ([], [])
    lines = [claude_line("user", 1, session="new"), claude_line("assistant", 2, session="new")]
    ingest_paths(con, [str(write_lines(tmp_path / "new.jsonl", lines))])
    replay_stalls(con)
    assert stamps.get(con, "stalls")["mode"] == "incremental"
    assert _leftovers(con) == ([], [])
    assert con.execute("SELECT * FROM stall_replay_info").fetchall() == info  # (the full replay's row)
    views = {
        v
        for (v,) in con.execute(
            "SELECT view_name FROM duckdb_views() WHERE database_name = current_database() AND schema_name = 'main'"
        ).fetchall()
    }
    assert {name for name, _ in VIEWS} <= views
    # the views read the merged rows: the new session's reply and turn
    assert con.execute("SELECT count(*) FROM rounds WHERE session_id = 'new'").fetchone() == (1,)
    assert con.execute("SELECT count(*) FROM turns WHERE session_id = 'new'").fetchone()[0] >= 1
    con.close()
