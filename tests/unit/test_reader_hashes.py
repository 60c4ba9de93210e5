"""The `files` row's head / tail hashes taken from the bytes the read holds (reader._Seen) equal those read back
from the file (plan.file_hashes) for what was consumed: the reader's edge-case files, files longer than the head
hash's 64 KB, a last line kept or left pending, lines across many small reads (with and without the arena), an
empty file; a read that did not hold the bytes (from an offset, a chunk) leaves them to file_hashes."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from stallscan.ingest import reader
from stallscan.ingest.plan import file_hashes
from stallscan.ingest.reader import Arena, ReadState, iter_lines

WHOLE = reader.BLOCK  # (a block holds each file here: one read)
CASES = sorted((Path(__file__).parent / "cases" / "reader").glob("*.jsonl"))


def _read(path, arena, start=0, line=1, max_bytes=None):
    state = ReadState(start, line)
    for block in iter_lines(path, "none", state, max_bytes=max_bytes, arena=arena):
        block.table(0)
    return state


def _write(path, n, tail):
    rng = random.Random(n)
    rows = [json.dumps({"i": i, "t": "x" * rng.choice([0, 3, 40, 900, 5000])}) for i in range(n)]
    path.write_bytes(("\n".join(rows) + "\n" + tail).encode())


@pytest.mark.parametrize("block", [WHOLE, 37, 5000])
@pytest.mark.parametrize("use_arena", [True, False])
@pytest.mark.parametrize("tail", ["", '{"last": true}', '{"cut": "mid-wri'])
def test_hashes_from_the_read_equal_the_files(tmp_path, monkeypatch, block, use_arena, tail):
    monkeypatch.setattr(reader, "BLOCK", block)
    paths = [*CASES, tmp_path / "big.jsonl", tmp_path / "small.jsonl", tmp_path / "empty.jsonl"]
    _write(paths[-3], 200, tail)  # (about 300 KB: past the head hash's 64 KB)
    _write(paths[-2], 3, tail)
    paths[-1].write_bytes(b"")
    arena = Arena() if use_arena else None
    taken = 0
    for path in paths:
        st = _read(path, arena)
        want = (st.consumed_bytes, *file_hashes(path, st.consumed_bytes))
        if st.hashes is not None:
            taken += 1
            assert st.hashes == want, path.name
        elif block == WHOLE:  # one read holds the whole file: always taken
            pytest.fail(f"{path.name}: no hashes from a whole-file read")
    assert taken >= (len(paths) if block == WHOLE else 1)


def test_a_read_from_an_offset_or_a_chunk_leaves_them_to_the_file(tmp_path):
    path = tmp_path / "a.jsonl"
    _write(path, 50, "")
    whole = _read(path, Arena())
    assert whole.hashes is not None
    offset = int(whole.line_offsets[0][10])
    assert _read(path, Arena(), start=offset, line=11).hashes is None
    assert _read(path, Arena(), max_bytes=1000).hashes is None
