"""A pass of fresh Claude files parsed batch by batch on a second connection beside the writes of the batch before
(stallscan/ingest/overlap.py): the rows are those of the batches parsed in turn on the ingest's connection; an error
in either thread stops the ingest with nothing written, raised in the ingest's thread, and no thread is left."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

import pytest

from stallscan.ingest import batch as ingest_batch
from stallscan.ingest import overlap
from stallscan.ingest import run as ingest_run
from stallscan.ingest.parse_batch import parse_batch as real_parse
from stallscan.ingest.run import ingest_paths
from stallscan.store.db import connect

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs"
TABLES = {
    "events": "file, line, part",
    "skipped": "file, line",
    "rejects": "file, line",
    "files": "path",
}


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
def claude(tmp_path: Path, monkeypatch) -> Path:
    """The Claude Code sample and copies of it (one session across files: its seq renumbered), with a damaged
    line in one and a torn last line in another, in batches of a file or two; every run here counts as large
    enough to overlap."""
    d = tmp_path / "claude"
    d.mkdir()
    text = (SAMPLES / "claude-code" / "session.jsonl").read_text()
    (d / "a.jsonl").write_text(text)
    (d / "b.jsonl").write_text(text + "{not json\n")
    (d / "c.jsonl").write_text(text.replace('"sessionId":"', '"sessionId":"c-'))
    (d / "d.jsonl").write_text(text + '{"type":"user","message":{"role":"user","content":"cut')
    shutil.copy(d / "c.jsonl", d / "e.jsonl")
    monkeypatch.setattr(ingest_run, "BATCH_BYTES", 3000)
    monkeypatch.setattr(ingest_run, "SMALL_RUN_BYTES", 0)
    return d


def _parse_threads(monkeypatch) -> list[str]:
    seen: list[str] = []
    parse = real_parse

    def recorded(*args, **kwargs):
        seen.append(threading.current_thread().name)
        return parse(*args, **kwargs)

    monkeypatch.setattr(overlap, "parse_batch", recorded)
    return seen


def test_a_pass_parsed_beside_the_writes_writes_the_rows_of_one_parsed_in_turn(tmp_path, claude, monkeypatch):
    seen = _parse_threads(monkeypatch)
    beside = _ingest(str(tmp_path / "beside.duckdb"), [str(claude)])
    assert len(seen) > 2 and set(seen) == {"stallscan-parse"}, seen
    monkeypatch.setattr(ingest_batch, "OVERLAP", False)
    in_turn = _ingest(str(tmp_path / "in_turn.duckdb"), [str(claude)])
    assert len(seen) > 2 and beside.events == in_turn.events > 0
    assert (beside.rejects, beside.pending, beside.sessions) == (in_turn.rejects, in_turn.pending, in_turn.sessions)
    assert _rows(str(tmp_path / "beside.duckdb")) == _rows(str(tmp_path / "in_turn.duckdb"))


def test_transactions_committed_between_batches_parsed_beside_keep_the_rows(tmp_path, claude, monkeypatch):
    monkeypatch.setattr(ingest_batch, "COMMIT_ROWS", 5)  # (a COMMIT after almost every batch: fids go on)
    beside = _ingest(str(tmp_path / "beside.duckdb"), [str(claude)])
    monkeypatch.setattr(ingest_batch, "OVERLAP", False)
    in_turn = _ingest(str(tmp_path / "in_turn.duckdb"), [str(claude)])
    assert beside.events == in_turn.events > 0
    assert _rows(str(tmp_path / "beside.duckdb")) == _rows(str(tmp_path / "in_turn.duckdb"))


def test_a_known_file_or_another_format_is_parsed_in_turn(tmp_path, claude, monkeypatch):
    seen = _parse_threads(monkeypatch)
    db = str(tmp_path / "known.duckdb")
    _ingest(db, [str(claude / "a.jsonl")])
    with (claude / "a.jsonl").open("a") as fh:  # grown: read from where the last ingest stopped
        fh.write((SAMPLES / "claude-code" / "session.jsonl").read_text().splitlines(keepends=True)[0])
    _ingest(db, [str(claude)])
    mixed = tmp_path / "mixed"
    shutil.copytree(claude, mixed / "claude")
    shutil.copytree(SAMPLES / "codex", mixed / "codex")
    _ingest(str(tmp_path / "mixed.duckdb"), [str(mixed)])
    assert seen == []


def test_an_error_in_the_parse_thread_is_raised_with_nothing_written(tmp_path, claude, monkeypatch):
    calls: list[int] = []
    parse = real_parse

    def fails_second(*args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise RuntimeError("parser on fire")
        return parse(*args, **kwargs)

    monkeypatch.setattr(overlap, "parse_batch", fails_second)
    db = str(tmp_path / "fail.duckdb")
    with pytest.raises(RuntimeError, match="parser on fire"):
        _ingest(db, [str(claude)])
    assert not [t for t in threading.enumerate() if t.name == "stallscan-parse"]
    assert all(rows == [] for rows in _rows(db).values())


def test_an_error_in_the_writes_stops_the_parse_beside_with_nothing_written(tmp_path, claude, monkeypatch):
    write = ingest_batch._write
    started = threading.Event()
    parse = real_parse

    def slow_parse(*args, **kwargs):
        started.set()
        return parse(*args, **kwargs)

    def fails_beside(*args, **kwargs):
        assert started.wait(10)
        raise RuntimeError("writer on fire")

    monkeypatch.setattr(overlap, "parse_batch", slow_parse)
    monkeypatch.setattr(ingest_batch, "_write", fails_beside)
    db = str(tmp_path / "fail.duckdb")
    with pytest.raises(RuntimeError, match="writer on fire"):
        _ingest(db, [str(claude)])
    assert not [t for t in threading.enumerate() if t.name == "stallscan-parse"]
    monkeypatch.setattr(ingest_batch, "_write", write)
    assert all(rows == [] for rows in _rows(db).values())
