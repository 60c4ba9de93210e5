"""A held run's batches of many files: each batch's Claude parse in the second instance runs on a worker thread
while the ingest's instance writes the batch before (ingest/batch._pass). The same rows as an unheld run, also when
a flush and COMMIT come between a batch's staging and its write (its fids start again at 0), and a failure of the
parse on the worker fails the run with nothing written and no thread left."""

from __future__ import annotations

import importlib.util
import threading
from pathlib import Path

import duckdb
import pytest

from stallscan.ingest import batch, parse_apart
from stallscan.ingest.run import ingest_paths
from stallscan.store.db import connect

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def many(tmp_path_factory: pytest.TempPathFactory) -> Path:
    spec = importlib.util.spec_from_file_location("bench_gen", ROOT / "bench" / "gen.py")
    assert spec and spec.loader
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    root = tmp_path_factory.mktemp("overlap")
    gen.main(["--format", "claude", "--bytes", "400K", "--out", str(root / "many"), "--seed", "5", "--files", "16"])
    # a file over a batch's bytes among them: read in chunks, its held tail booked by fid (hold_tail.sql)
    gen.main(["--format", "claude", "--bytes", "300K", "--out", str(root / "many" / "zzz.jsonl"), "--seed", "6"])
    return root / "many"


def _rows(con) -> dict[str, tuple]:
    return {
        t: con.execute(f"SELECT count(*), sum(hash(r)::HUGEINT) FROM {t} r").fetchone()
        for t in ("events", "skipped", "rejects", "files")
    }


def _ingest(path: Path, hold_from: int, monkeypatch: pytest.MonkeyPatch) -> dict[str, tuple]:
    monkeypatch.setattr(batch, "HOLD_FROM", hold_from)
    con = connect(":memory:")
    try:
        ingest_paths(con, [str(path)])
        con.execute("UPDATE files SET ingested_at = NULL")  # (the run's time)
        return _rows(con)
    finally:
        con.close()


def _spy(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The name of the thread each batch's apart parse ran on."""
    ran: list[str] = []
    real = batch._parse_apart

    def spy(*args):
        ran.append(threading.current_thread().name)
        return real(*args)

    monkeypatch.setattr(batch, "_parse_apart", spy)
    return ran


def test_batches_parsed_beside_the_write_give_the_same_rows(many, monkeypatch):
    monkeypatch.setattr("stallscan.ingest.run.BATCH_BYTES", 64 * 1024)  # several batches of several files
    unheld = _ingest(many, 1 << 62, monkeypatch)
    assert unheld["events"][0] > 100
    ran = _spy(monkeypatch)
    assert _ingest(many, 0, monkeypatch) == unheld
    assert len(ran) >= 4
    assert ran[0] == threading.current_thread().name  # the first: nothing to write beside it
    assert ran.count("stallscan-parse") >= 3  # (a file over a batch's bytes goes on in a pass of its own)


def test_a_flush_between_a_batch_staged_and_written(many, monkeypatch):
    """COMMIT_ROWS so low that every batch's write is followed by a flush and a COMMIT: the next batch, staged and
    parsed before it with the fids after the batch's, is written with fids from 0 as a batch read in its turn."""
    monkeypatch.setattr("stallscan.ingest.run.BATCH_BYTES", 64 * 1024)
    monkeypatch.setattr(batch, "COMMIT_ROWS", 1)
    unheld = _ingest(many, 1 << 62, monkeypatch)
    ran = _spy(monkeypatch)
    fids: list[tuple] = []
    real = batch._write

    def write(con, stage, staged, parsed, res, touched, tx, *rest):
        out = real(con, stage, staged, parsed, res, touched, tx, *rest)
        # the batch's fids as the transaction booked it (tx.add: its files at the end of tx.plans), and its parse's
        booked = list(range(len(tx.plans) - len(staged.batch), len(tx.plans)))
        fids.append((booked, *con.execute("SELECT list(fid ORDER BY fid) FROM batch_files").fetchall()[0]))
        fids[-1] += (con.execute("SELECT min(fid), max(fid) FROM cc").fetchall()[0],)
        return out

    monkeypatch.setattr(batch, "_write", write)
    assert _ingest(many, 0, monkeypatch) == unheld
    assert "stallscan-parse" in ran
    assert len(fids) >= 4
    for booked, files, parsed in fids:
        assert files == booked
        assert parsed[0] >= booked[0] and parsed[1] <= booked[-1]


def test_a_failed_parse_beside_the_write_is_raised_and_rolls_back(many, monkeypatch):
    monkeypatch.setattr("stallscan.ingest.run.BATCH_BYTES", 64 * 1024)
    monkeypatch.setattr(batch, "HOLD_FROM", 0)
    real = parse_apart.Apart.batch
    made: list[parse_apart.Apart] = []

    def broken(self, files, stage_view):
        real(self, files, stage_view)
        made.append(self)
        if len(made) == 3:  # the third batch, parsed on the worker: its files without the column the parse reads
            self.con.register("batch_files", files.drop_columns(["stem"]))

    monkeypatch.setattr(parse_apart.Apart, "batch", broken)
    con = connect(":memory:")
    try:
        with pytest.raises(duckdb.BinderException):
            ingest_paths(con, [str(many)])
        assert not [t for t in threading.enumerate() if t.name == "stallscan-parse"]
        assert con.execute("SELECT count(*) FROM events").fetchone() == (0,)
        with pytest.raises(duckdb.ConnectionException):
            made[-1].con.execute("SELECT 1")
        monkeypatch.setattr(parse_apart.Apart, "batch", real)
        ingest_paths(con, [str(many)])  # the same connection ingests again
        assert con.execute("SELECT count(*) FROM events").fetchone()[0] > 100
    finally:
        con.close()


def test_a_pass_is_cut_into_as_many_batches_of_even_bytes():
    """As many batches as the batch bytes ask for, of about even bytes: eight 40 MB files in three batches of 120,
    120 and 80 MB at 128 MB a batch (not two of 160: a batch closes once it reaches its share), and 311 MB of small
    files in three of about 104 MB, not 128 + 128 + 55."""

    class Plan:
        def __init__(self, size: int, fmt: str = "claude_code") -> None:
            self.size, self.start_offset, self.fmt = size, 0, fmt

    mb = 1 << 20
    sizes = lambda plans: [sum(p.size for p in b) // mb for b in batch._batches(plans, 128 * mb)]
    assert sizes([Plan(40 * mb) for _ in range(8)]) == [120, 120, 80]
    tree = sizes([Plan(mb // 4) for _ in range(4 * 311)])
    assert len(tree) == 3 and max(tree) - min(tree) <= 1
    assert sizes([Plan(mb), Plan(mb, "codex")]) == [1, 1]  # (one format a batch)
    assert sizes([Plan(0)]) == [0]


def test_only_the_apart_tables_read_a_batch_s_staged_lines():
    """While a batch's apart tables are parsed on the worker, the next batch is read into the arena of the batch
    before, whose write is still to run (read_ahead.ReadAhead, batch._pass): that write must not read the staged
    lines (stage_lines / stage_raw), or it would read another batch's bytes. So in a format with apart tables,
    only those tables' statements may name them."""
    from stallscan.ingest.detect import SPECS
    from stallscan.ingest.parse_batch import _CREATE
    from stallscan.store import sql

    checked = 0
    for spec in SPECS.values():
        if not spec.apart:
            continue
        for name in (*spec.before, f"{spec.name}_events", *spec.then):
            for stmt in sql.load(f"ingest/{name}"):
                made = _CREATE.match(stmt)
                body = "\n".join(line.split("--")[0] for line in stmt.splitlines())
                if made and made.group(1) in spec.apart:
                    checked += 1
                    continue
                assert "stage_lines" not in body and "stage_raw" not in body, (spec.name, name, stmt[:200])
    assert checked >= 1  # (the Claude parse's cc)
