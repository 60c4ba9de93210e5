"""stallscan.ingest.reader.Arena: a plain file's lines read into reused memory are the lines a fresh read gives,
with lines longer than a block and than a room, a last line without its newline (kept when it parses, left
pending when it does not), and a second file read into the same rooms after `reset` (the next batch)."""

from __future__ import annotations

import json
import random

import pytest

from stallscan.ingest import reader
from stallscan.ingest.reader import Arena, ReadState, iter_lines


def _lines(path, arena):
    """Every line's bytes (copied as each block comes: the arena may reuse them later) and the final state."""
    state = ReadState(0, 1)
    out = [bytes(line.as_py()) for block in iter_lines(path, "none", state, arena=arena) for line in block.raw]
    return out, (state.consumed_bytes, state.consumed_lines, state.ends_newline, state.pending_bytes)


@pytest.fixture
def small(monkeypatch):
    monkeypatch.setattr(reader, "BLOCK", 37)  # many reads per file, lines across reads
    monkeypatch.setattr(Arena, "ROOM", 100)  # lines longer than a room
    monkeypatch.setattr(Arena, "KEEP", 2)


def _write(path, n, tail, tag="a"):
    rng = random.Random(n)
    rows = [json.dumps({"f": tag, "i": i, "t": "x" * rng.choice([0, 3, 40, 90, 150, 420])}) for i in range(n)]
    path.write_bytes(("\n".join(rows) + "\n" + tail).encode())
    return [(r + "\n").encode() for r in rows]


@pytest.mark.parametrize("tail", ["", '{"last": true}', '{"cut": "mid-wri'])
def test_arena_lines_equal_fresh_reads(tmp_path, small, tail):
    path = tmp_path / "a.jsonl"
    rows = _write(path, 200, tail)
    fresh = _lines(path, None)
    got = _lines(path, Arena())
    assert got == fresh
    kept = [tail.encode()] if tail.endswith("}") else []
    assert got[0] == rows + kept  # the file's own lines, not only the fresh read's
    assert got[1][3] == (0 if tail.endswith("}") or not tail else len(tail))  # an unparsable tail: pending


def test_the_next_batch_reuses_the_rooms_and_reads_its_own_lines(tmp_path, small):
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    rows_a, rows_b = _write(a, 150, ""), _write(b, 90, "", tag="b")
    arena = Arena()
    got_a, _ = _lines(a, arena)
    kept = [r for r in arena.rooms if len(r) <= Arena.ROOM][: Arena.KEEP]
    assert len(kept) == Arena.KEEP  # (the file filled more rooms than are kept)
    arena.reset()
    assert [id(r) for r in arena.rooms] == [id(r) for r in kept]  # a room as long as a line over ROOM is freed
    got_b, _ = _lines(b, arena)
    assert got_a == rows_a and got_b == rows_b
    assert bytes(kept[0][: len(rows_b[0])]) == rows_b[0]  # the second file was read into the first kept room
