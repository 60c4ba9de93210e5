"""The no-change `stallscan ingest`: the command first asks stallscan.ingest.run.unchanged on a read-only
connection. Its answer equals what a full ingest run says for the same unchanged corpus (timing aside), it
writes nothing, and any file with work to do (or a forced format that differs) leaves it to ingest_paths."""

from __future__ import annotations

import json
import os
import shutil

from typer.testing import CliRunner

from stallscan.cli import app
from stallscan.ingest.run import ingest_paths, unchanged
from stallscan.store.db import connect
from tests.helpers import SAMPLES, claude_line


def _corpus(tmp_path):
    src = tmp_path / "logs"
    shutil.copytree(SAMPLES / "claude-code", src / "claude-code")
    shutil.copytree(SAMPLES / "codex", src / "codex")
    return src


def _timeless(summary: dict) -> dict:
    return {k: v for k, v in summary.items() if k not in ("seconds", "mb_per_s")}


def _state(db: str) -> list[tuple[str, int, int]]:
    return [(p, os.stat(p).st_size, os.stat(p).st_mtime_ns) for p in (db, db + ".wal") if os.path.exists(p)]


def test_unchanged_answers_as_a_full_run_would(tmp_path):
    src, db = _corpus(tmp_path), str(tmp_path / "s.duckdb")
    con = connect(db)
    first = ingest_paths(con, [str(src)])
    assert first.ingested > 0
    again = ingest_paths(con, [str(src)]).as_dict()
    con.close()
    ro = connect(db, read_only=True)
    fast = unchanged(ro, [str(src)])
    ro.close()
    assert fast is not None and _timeless(fast.as_dict()) == _timeless(again)
    assert again["unchanged"] == again["files"] > 0 and again["ingested"] == 0


def test_the_no_change_command_writes_nothing_and_prints_the_same(tmp_path):
    src, db = _corpus(tmp_path), str(tmp_path / "s.duckdb")
    runner = CliRunner()
    first = runner.invoke(app, ["ingest", str(src), "--db", db, "--json"])
    assert first.exit_code == 0 and json.loads(first.stdout)["ingested"] > 0
    before = _state(db)
    r = runner.invoke(app, ["ingest", str(src), "--db", db, "--json"])
    assert r.exit_code == 0, r.output
    res = json.loads(r.stdout)
    assert res["unchanged"] == res["files"] > 0 and res["ingested"] == 0
    assert _state(db) == before  # no write connection was opened: the file and its WAL are as they were


def test_a_grown_file_is_read(tmp_path):
    src, db = _corpus(tmp_path), str(tmp_path / "s.duckdb")
    con = connect(db)
    ingest_paths(con, [str(src)])
    log = sorted((src / "claude-code").rglob("*.jsonl"))[0]
    with log.open("a") as fh:
        fh.write(claude_line("user", 59, session="quick-grown") + "\n")
    assert unchanged(con, [str(src)]) is None
    con.close()
    r = CliRunner().invoke(app, ["ingest", str(src), "--db", db, "--json"])
    res = json.loads(r.stdout)
    assert res["ingested"] == 1 and res["unchanged"] == res["files"] - 1 and res["events"] >= 1


def test_another_forced_format_is_not_unchanged(tmp_path):
    src, db = _corpus(tmp_path), str(tmp_path / "s.duckdb")
    con = connect(db)
    ingest_paths(con, [str(src / "codex")])
    assert unchanged(con, [str(src / "codex")]) is not None
    assert unchanged(con, [str(src / "codex")], "claude_code") is None
    con.close()
