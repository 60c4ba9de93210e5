"""The next batch of a pass read on a worker thread while DuckDB writes the one before
(stallscan/ingest/read_ahead.py, `ReadAhead`): the rows are those of the batches read one after the other, and
the `files` rows' hashes, taken by the read, those of `plan.file_hashes` over the bytes consumed."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

import pytest

from stallscan.ingest import batch as ingest_batch
from stallscan.ingest import read_ahead
from stallscan.ingest import run as ingest_run
from stallscan.ingest.parse_batch import parse_batch as real_parse
from stallscan.ingest.plan import file_hashes
from stallscan.ingest.plan import plan as real_plan
from stallscan.ingest.run import ingest_paths
from stallscan.store.db import connect

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs"
TABLES = {
    "events": "file, line, part",
    "skipped": "file, line",
    "rejects": "file, line",
    "files": "path",
}


class _InTurn(read_ahead.ReadAhead):
    """The batches read one after the other on the calling thread (the reads before the read-ahead)."""

    def start_next(self) -> None:
        pass


def _rows(db: str) -> dict[str, list[tuple]]:
    con = connect(db)
    try:
        out = {}
        for t, key in TABLES.items():
            cols = [r[0] for r in con.execute(f"DESCRIBE {t}").fetchall() if r[0] != "ingested_at"]
            out[t] = con.execute(f"SELECT {', '.join(cols)} FROM {t} ORDER BY {key}").fetchall()
        return out
    finally:
        con.close()


def _ingest(db: str, paths: list[str]):
    con = connect(db)
    try:
        return ingest_paths(con, paths)
    finally:
        con.close()


@pytest.fixture
def logs(tmp_path: Path) -> Path:
    """Three formats' samples, and the Claude Code sample twice more (a pass of many same-format batches)."""
    d = tmp_path / "logs"
    for fmt in ("claude-code", "codex", "cline"):
        shutil.copytree(SAMPLES / fmt, d / fmt)
    for i in range(2):
        shutil.copy(SAMPLES / "claude-code" / "session.jsonl", d / "claude-code" / f"copy{i}.jsonl")
    return d


def test_batches_read_ahead_write_the_rows_of_batches_read_in_turn(tmp_path, logs, monkeypatch):
    monkeypatch.setattr(ingest_run, "BATCH_BYTES", 3000)  # (a few lines a chunk, a file or two a batch)
    threads: list[str] = []
    read = read_ahead.read_batch

    def seen(*args, **kwargs):
        threads.append(threading.current_thread().name)
        return read(*args, **kwargs)

    monkeypatch.setattr(read_ahead, "read_batch", seen)
    ahead = _ingest(str(tmp_path / "ahead.duckdb"), [str(logs)])
    assert any(t.startswith("stallscan-read") for t in threads), threads  # (the worker read batches)
    assert threading.main_thread().name in threads  # (and each pass's first batch, and JSON-array files', in turn)
    monkeypatch.setattr(ingest_batch, "ReadAhead", _InTurn)
    in_turn = _ingest(str(tmp_path / "in_turn.duckdb"), [str(logs)])
    assert (ahead.events, ahead.lines, ahead.rejects, ahead.bytes) == (
        in_turn.events,
        in_turn.lines,
        in_turn.rejects,
        in_turn.bytes,
    )
    assert ahead.events > 0
    rows = _rows(str(tmp_path / "ahead.duckdb"))
    assert rows == _rows(str(tmp_path / "in_turn.duckdb"))
    con = connect(str(tmp_path / "ahead.duckdb"))
    try:
        hashes = con.execute(
            "SELECT path, consumed_bytes, head_hash, tail_hash FROM files WHERE compression = 'none' ORDER BY path"
        ).fetchall()
    finally:
        con.close()
    assert len(hashes) >= 5
    for path, consumed, head, tail in hashes:  # (chunked files' held tails among them: hashed at the flush)
        assert (head, tail) == file_hashes(Path(path), consumed), path


def test_a_file_gone_before_its_batch_is_read_ahead_is_unreadable(tmp_path, logs, monkeypatch):
    monkeypatch.setattr(ingest_run, "BATCH_BYTES", 3000)
    gone = logs / "claude-code" / "copy1.jsonl"
    plan = real_plan

    def plan_then_delete(*args, **kwargs):
        plans = plan(*args, **kwargs)
        gone.unlink()  # (after it was planned: the read finds it missing)
        return plans

    monkeypatch.setattr(ingest_run, "_plan", plan_then_delete)
    res = _ingest(str(tmp_path / "a.duckdb"), [str(logs)])
    assert [u[0] for u in res.unreadable] == [str(gone)]
    rows = _rows(str(tmp_path / "a.duckdb"))
    assert str(gone) not in {r[0] for r in rows["files"]}
    assert any(r[0] == str(logs / "claude-code" / "copy0.jsonl") for r in rows["files"])


def test_an_error_in_a_batch_read_ahead_stops_the_ingest_with_nothing_written(tmp_path, logs, monkeypatch):
    monkeypatch.setattr(ingest_run, "BATCH_BYTES", 3000)
    read = read_ahead.read_batch

    def fails_beside(*args, **kwargs):
        if threading.current_thread() is not threading.main_thread():
            raise RuntimeError("disk on fire")
        return read(*args, **kwargs)

    monkeypatch.setattr(read_ahead, "read_batch", fails_beside)
    db = str(tmp_path / "a.duckdb")
    with pytest.raises(RuntimeError, match="disk on fire"):
        _ingest(db, [str(logs)])
    rows = _rows(db)
    assert rows["events"] == [] and rows["files"] == []  # (the transaction rolled back)


def test_the_next_batch_is_read_from_the_start_of_the_parse_before(tmp_path, logs, monkeypatch):
    """The read of a pass's second batch starts with the first's, and each next one before the parse of the batch
    before, not after it (started after it, the ingest waited for the read once the steps after the parse were
    done)."""
    monkeypatch.setattr(ingest_run, "BATCH_BYTES", 3000)
    steps: list[str] = []

    class Logged(read_ahead._Reading):
        def __init__(self, *args) -> None:
            steps.append("read ahead")
            super().__init__(*args)

    parse = real_parse

    def logged_parse(*args, **kwargs):
        steps.append("parse")
        return parse(*args, **kwargs)

    read = read_ahead.read_batch

    def logged_read(*args, **kwargs):
        if threading.current_thread() is threading.main_thread():
            steps.append("read")
        return read(*args, **kwargs)

    monkeypatch.setattr(read_ahead, "_Reading", Logged)
    monkeypatch.setattr(read_ahead, "read_batch", logged_read)
    monkeypatch.setattr(ingest_batch, "parse_batch", logged_parse)
    _ingest(str(tmp_path / "a.duckdb"), [str(logs)])
    # the second batch's read beside the first's, then the first batch's parse
    assert steps[:3] == ["read ahead", "read", "parse"], steps
    assert steps.count("read ahead") >= 3
    for i, step in enumerate(steps[1:], 1):  # (each later one just before a parse, or beside a next pass's first read)
        if steps[i - 1] == "read ahead":
            assert step in ("parse", "read"), steps
