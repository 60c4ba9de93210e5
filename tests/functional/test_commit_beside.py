"""A large ingest's last COMMIT on a thread (ingest/commit_beside.py): the same rows, visible when the ingest
returns, its error raised by join(), nothing left running; a report through it gives the same JSON."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import duckdb
import pytest

from stallscan.ingest import commit_beside, run
from stallscan.ingest.commit_beside import CommitBeside
from stallscan.ingest.run import ingest_paths
from stallscan.store.db import connect

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs"
TABLES = ("events", "files", "skipped", "stallscan_meta")
SKIP = {"files": "EXCLUDE (ingested_at)"}


def _rows(path: Path) -> dict[str, list[tuple]]:
    con = duckdb.connect(str(path), read_only=True)
    try:
        # (files.ingested_at: the time of each run)
        return {t: con.execute(f"SELECT * {SKIP.get(t, '')} FROM {t} ORDER BY ALL").fetchall() for t in TABLES}
    finally:
        con.close()


def _alive() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name == "stallscan-commit"]


@pytest.fixture
def large(monkeypatch):
    monkeypatch.setattr(run, "SMALL_RUN_BYTES", 0)  # (sample_logs is under 4 MB: its last COMMIT a checkpoint)


def _ingest(path: Path, beside: CommitBeside | None) -> dict:
    con = connect(str(path), macros=False)
    threshold = con.execute("SELECT current_setting('checkpoint_threshold')").fetchall()[0][0]
    try:
        res = ingest_paths(con, [str(SAMPLES)], beside=beside)
        if beside is not None:
            look = duckdb.connect(str(path))  # (the same database instance: another connection)
            try:  # the rows are visible to another connection when the ingest returns
                assert look.execute("SELECT count(*) FROM events").fetchall()[0][0] == res.events > 0
                # (the threshold the run set for its COMMIT is set back: the caller's commits checkpoint no more)
                assert look.execute("SELECT current_setting('checkpoint_threshold')").fetchall()[0][0] == threshold
            finally:
                look.close()
            beside.join()
        assert not _alive()
        return res.as_dict()
    finally:
        con.close()


def test_the_same_rows_and_result_as_a_commit_in_line(tmp_path, large):
    plain = _ingest(tmp_path / "plain.duckdb", None)
    beside = _ingest(tmp_path / "beside.duckdb", CommitBeside())
    for timed in ("seconds", "mb_per_s"):  # (the run's time, and its rate: they depend on the machine's load)
        plain.pop(timed, None), beside.pop(timed, None)
    assert beside == plain
    assert _rows(tmp_path / "beside.duckdb") == _rows(tmp_path / "plain.duckdb")
    assert not (tmp_path / "beside.duckdb.wal").exists()  # (the COMMIT checkpointed)


def test_a_failed_commit_is_raised_by_join_and_loses_the_transaction(tmp_path, large, monkeypatch):
    monkeypatch.setattr(commit_beside, "COMMIT", "COMMIT nowhere")
    path = tmp_path / "f.duckdb"
    con = connect(str(path), macros=False)
    beside = CommitBeside()
    try:
        ingest_paths(con, [str(SAMPLES)], beside=beside)  # (returns once the COMMIT ended: no version seen)
        assert not _alive()
        with pytest.raises(duckdb.ParserException):
            beside.join()
        beside.join()  # (raised once)
        assert con.execute("SELECT count(*) FROM events").fetchall()[0][0] == 0
    finally:
        con.close()


def _report(tmp_path: Path, name: str) -> str:
    from typer.testing import CliRunner

    from stallscan.cli import app

    out = CliRunner().invoke(app, ["report", str(SAMPLES), "--db", str(tmp_path / name), "--format", "json"])
    assert out.exit_code == 0, out.output
    return str(out.stdout)


def test_a_report_through_it_gives_the_same_json(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("STALLSCAN_CONFIG", raising=False)
    starts: list[int] = []
    real = CommitBeside.start

    def start(self, con, threshold):
        starts.append(1)
        real(self, con, threshold)

    monkeypatch.setattr(CommitBeside, "start", start)
    small = _report(tmp_path, "a.duckdb")  # (under SMALL_RUN_BYTES: no commit beside)
    assert not starts
    monkeypatch.setattr(run, "SMALL_RUN_BYTES", 0)
    big = _report(tmp_path, "a2.duckdb")
    assert starts == [1] and not _alive()
    assert json.loads(big.replace("a2.duckdb", "a.duckdb")) == json.loads(small)
    assert not (tmp_path / "a2.duckdb.wal").exists()


def test_a_failed_build_leaves_nothing_running(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from stallscan.cli import app
    from stallscan.replay import labels

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(run, "SMALL_RUN_BYTES", 0)

    def fail(*a, **k):
        raise RuntimeError("labels failed")

    monkeypatch.setattr(labels, "label_events", fail)
    out = CliRunner().invoke(app, ["report", str(SAMPLES), "--db", str(tmp_path / "x.duckdb"), "--format", "json"])
    assert isinstance(out.exception, RuntimeError) and not _alive()


def test_a_failed_commit_fails_the_report(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from stallscan.cli import app

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(run, "SMALL_RUN_BYTES", 0)
    monkeypatch.setattr(commit_beside, "COMMIT", "COMMIT nowhere")
    out = CliRunner().invoke(app, ["report", str(SAMPLES), "--db", str(tmp_path / "y.duckdb"), "--format", "json"])
    assert out.exit_code != 0 and not _alive()
