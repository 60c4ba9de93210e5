"""The Claude parse's large per-batch tables held as Arrow (ingest/parse_batch.Held, from batch.HOLD_FROM bytes a
run) give the same rows as its temp tables: a generated corpus in small batches (a chunked big file and batches
of small files), formats mixed in one run, and held and unheld runs one after another on one connection."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

import duckdb
import pytest

from stallscan.ingest import batch, parse_apart
from stallscan.ingest.run import ingest_paths
from stallscan.store.db import connect

ROOT = Path(__file__).resolve().parents[2]


def _generate(out: Path, size: str, files: int, seed: int) -> None:
    spec = importlib.util.spec_from_file_location("bench_gen", ROOT / "bench" / "gen.py")
    assert spec and spec.loader
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    args = ["--format", "claude", "--bytes", size, "--out", str(out), "--seed", str(seed)]
    gen.main([*args, "--files", str(files)] if files else args)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("held")
    _generate(root / "big.jsonl", "600K", 0, 3)
    _generate(root / "many", "300K", 5, 3)
    return root


def _rows(con) -> dict[str, tuple]:
    return {
        t: con.execute(f"SELECT count(*), sum(hash(r)::HUGEINT) FROM {t} r").fetchone()
        for t in ("events", "skipped", "rejects")
    }


def _ingest(paths: list[Path], hold_from: int, monkeypatch: pytest.MonkeyPatch, con=None) -> dict[str, tuple]:
    monkeypatch.setattr(batch, "HOLD_FROM", hold_from)
    own = con is None
    con = con or connect(":memory:")
    try:
        ingest_paths(con, [str(p) for p in paths])
        # the held tables' names are unregistered after the run
        assert con.execute("SELECT count(*) FROM duckdb_views() WHERE view_name IN ('cc', 'cc_reply')").fetchone() == (
            0,
        )
        return _rows(con)
    finally:
        if own:
            con.close()


def test_held_tables_give_the_temp_tables_rows(corpus, monkeypatch):
    monkeypatch.setattr("stallscan.ingest.run.BATCH_BYTES", 256 * 1024)  # several batches, the big file in chunks
    paths = [corpus / "big.jsonl", corpus / "many"]
    unheld = _ingest(paths, 1 << 62, monkeypatch)
    assert unheld["events"][0] > 300
    assert _ingest(paths, 0, monkeypatch) == unheld


def test_held_and_unheld_runs_on_one_connection_and_formats_mixed(corpus, tmp_path, monkeypatch):
    monkeypatch.setattr("stallscan.ingest.run.BATCH_BYTES", 256 * 1024)
    codex = tmp_path / "codex"
    shutil.copytree(ROOT / "sample_logs" / "codex", codex)
    files = sorted((corpus / "many").rglob("*.jsonl"))
    assert len(files) >= 3
    parts = [[files[0], codex], files[1:2], [*files[2:], corpus / "big.jsonl"]]
    expected_con = connect(":memory:")
    try:
        monkeypatch.setattr(batch, "HOLD_FROM", 1 << 62)
        for part in parts:
            ingest_paths(expected_con, [str(p) for p in part])
        expected = _rows(expected_con)
    finally:
        expected_con.close()
    con = connect(":memory:")
    try:
        for part, hold_from in zip(parts, (0, 1 << 62, 0)):  # held, then temp tables, then held again
            got = _ingest(part, hold_from, monkeypatch, con)
        assert got == expected
    finally:
        con.close()


def _threads(con) -> int:
    return int(con.execute("SELECT current_setting('threads')").fetchone()[0])


def test_held_run_parses_apart_and_sets_its_threads_back(corpus, monkeypatch):
    """A held run's Claude parse runs in a second DuckDB instance (ingest/parse_apart.py), the ingest's own on one
    thread meanwhile; after the run the second instance is closed and the ingest's threads are what they were."""
    monkeypatch.setattr("stallscan.ingest.run.BATCH_BYTES", 256 * 1024)
    made: list[parse_apart.Apart] = []
    real = parse_apart.Apart.__init__

    def init(self, *args, **kwargs):
        real(self, *args, **kwargs)
        made.append(self)

    monkeypatch.setattr(parse_apart.Apart, "__init__", init)
    con = connect(":memory:")
    try:
        was = _threads(con)
        _ingest([corpus / "big.jsonl"], 0, monkeypatch, con)
        assert len(made) == 1  # one instance a run, whatever its batches
        assert _threads(con) == was
        with pytest.raises(duckdb.ConnectionException):
            made[0].con.execute("SELECT 1")
    finally:
        con.close()


def test_a_failed_parse_apart_is_raised_and_rolls_back(corpus, monkeypatch):
    """A statement that fails in the second instance fails the run: nothing written, the instance closed, the
    ingest's threads set back."""
    monkeypatch.setattr("stallscan.ingest.run.BATCH_BYTES", 256 * 1024)
    made: list[parse_apart.Apart] = []
    real = parse_apart.Apart.batch

    def broken(self, files, stage_view):
        real(self, files, stage_view)
        made.append(self)
        if len(made) == 2:  # the second batch: its files without the column the parse reads
            self.con.register("batch_files", files.drop_columns(["stem"]))

    monkeypatch.setattr(parse_apart.Apart, "batch", broken)
    monkeypatch.setattr(batch, "HOLD_FROM", 0)
    con = connect(":memory:")
    try:
        was = _threads(con)
        with pytest.raises(duckdb.BinderException):
            ingest_paths(con, [str(corpus / "big.jsonl")])
        assert _threads(con) == was
        assert con.execute("SELECT count(*) FROM events").fetchone() == (0,)
        with pytest.raises(duckdb.ConnectionException):
            made[-1].con.execute("SELECT 1")
        # the same connection ingests again (the rolled-back batch's parse views are made anew), as a new one would
        monkeypatch.setattr(parse_apart.Apart, "batch", real)
        ingest_paths(con, [str(corpus / "big.jsonl")])
        again = con.execute("SELECT count(*), sum(hash(event_id)) FROM events").fetchone()
        fresh = connect(":memory:")
        try:
            ingest_paths(fresh, [str(corpus / "big.jsonl")])
            assert again == fresh.execute("SELECT count(*), sum(hash(event_id)) FROM events").fetchone()
            assert again[0] > 0
        finally:
            fresh.close()
    finally:
        con.close()


def test_the_parse_instance_memory_follows_the_budget(monkeypatch):
    """The second instance's memory_limit is a quarter of the process's budget, at least 256MB, unless set."""
    monkeypatch.delenv("STALLSCAN_PARSE_MEMORY_LIMIT", raising=False)
    monkeypatch.setenv("STALLSCAN_MEMORY_BUDGET", "2GB")
    assert parse_apart.memory_limit() == "512MB"
    monkeypatch.setenv("STALLSCAN_MEMORY_BUDGET", "4GB")
    assert parse_apart.memory_limit() == "1024MB"
    monkeypatch.setenv("STALLSCAN_MEMORY_BUDGET", "600MB")
    assert parse_apart.memory_limit() == "256MB"
    monkeypatch.setenv("STALLSCAN_PARSE_MEMORY_LIMIT", "300MB")
    assert parse_apart.memory_limit() == "300MB"
