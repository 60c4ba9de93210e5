"""Turn a transcript file into numbered lines, in bulk (numpy newline scan, zero-copy arrow arrays).

No per-line Python: a file is read in large blocks, newline offsets are found with numpy and the
lines become an arrow `large_binary` array that DuckDB scans directly. JSON-array files (Cline,
OpenHands, ...) are not line-based and are handled by their format modules.
"""

from __future__ import annotations

import io
import json
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, cast

import numpy as np
import pyarrow as pa

from stallscan.ingest.detect import open_binary, read_some
from stallscan.store import arrow

if TYPE_CHECKING:
    import duckdb

BLOCK = 64 * 1024 * 1024  # bytes read per block


def read_whole(path: Path, compression: str, state: ReadState) -> Iterator[LineBlock]:
    """A one-document file (JSON array / object) as a single block holding one 'line' (the document)."""
    with open_binary(path, compression) as fh:
        data, _ = read_some(fh, None, compression)  # a damaged stream: what decodes (the document's parse rejects it)
    state.consumed_bytes = len(data)
    state.consumed_lines = 1 if data.strip() else 0
    if data.strip():
        starts = np.array([0, len(data)], dtype=np.int64)
        block = _block(data, starts, 1, 0)
        state.line_offsets.append(block.offsets)
        yield block


@dataclass
class LineBlock:
    """A run of complete lines: 1-based numbers, raw bytes (newline kept), byte offsets of line starts."""

    first_line: int
    raw: pa.LargeBinaryArray
    offsets: np.ndarray  # absolute byte offset of each line start (decompressed stream)

    def table(self, fid: int) -> pa.Table:
        n = len(self.raw)
        return arrow.table(
            {
                "fid": arrow.from_numpy(np.full(n, fid, dtype=np.int32)),
                "line": arrow.from_numpy(np.arange(self.first_line, self.first_line + n, dtype=np.int32)),
                "raw": self.raw,
            }
        )


@dataclass
class ReadState:
    """What a pass over a file consumed; filled in as blocks are read."""

    start_offset: int
    start_line: int
    consumed_bytes: int = 0
    consumed_lines: int = 0  # lines numbered so far (last line number)
    ends_newline: bool = True
    pending_bytes: int = 0  # an unterminated last line that did not parse: left for the next ingest
    more: bool = False  # stopped at max_bytes: the rest of the file is read by a continuation pass
    line_offsets: list[np.ndarray] = field(default_factory=list)  # arrays of line-start offsets, per block
    damaged: str | None = None  # a gzip / zstd stream that stopped decoding: why (the rest is one reject)
    damaged_line: int = 0  # the reject's line: the line the damage cut (or the one after the last read)
    damaged_excerpt: bytes = b""  # the decoded start of that cut line
    # a plain file's `files` row hashes (plan.file_hashes) up to the bytes consumed: (consumed, head, tail), taken
    # by the read (ingest/read_ahead.py: on the read-ahead's thread, off the ingest's main thread)
    hashes: tuple[int, str, str] | None = None


def _newlines(buf: np.ndarray) -> np.ndarray:
    # (1 MB steps: the step's temporaries stay in the allocator's heap; 16 MB ones were fresh pages every
    # step, paid in page faults: 0.10-0.16 s CPU less over a 326 MB tree of 990 files)
    step = 1024 * 1024
    parts = [np.flatnonzero(buf[i : i + step] == 10) + i for i in range(0, len(buf), step)]
    return np.concatenate(parts) if parts else np.empty(0, dtype=np.int64)


def iter_lines(
    path: Path,
    compression: str,
    state: ReadState,
    skip_leading_newline: bool = False,
    max_bytes: int | None = None,
    arena: Arena | None = None,
) -> Iterator[LineBlock]:
    """Yield blocks of complete lines from `state.start_offset`; update `state` as it goes.

    A last line without a trailing newline is kept when it parses as JSON (many writers omit the final
    newline) and left pending otherwise (a live log cut mid-write): it is re-read by the next ingest.
    arena: where a plain file's bytes are read into (reused batch after batch; see Arena), else fresh bytes.
    """
    line_no = state.start_line
    pos = state.start_offset  # absolute offset of `carry` start
    carry: bytes | np.ndarray = b""
    into = arena if compression == "none" else None
    with open_binary(path, compression) as fh:
        if state.start_offset:
            if compression == "none":
                fh.seek(state.start_offset)
            else:
                _discard(fh, state.start_offset)
        first = True
        step = min(BLOCK, max_bytes) if max_bytes else BLOCK
        while True:
            data: bytes | np.ndarray
            if into is not None:
                data, got = into.read(fh, carry, _want(fh, step, compression))
            else:
                chunk, err = read_some(fh, _want(fh, step, compression), compression)
                if err is not None:  # a damaged gzip / zstd stream: keep what decoded, book the rest as one reject
                    state.damaged = (
                        f"{compression} stream damaged after {pos + len(carry) + len(chunk)} decoded bytes: "
                        + (str(err).strip().split("\n")[0] or type(err).__name__)
                    )
                data, got = (bytes(carry) + chunk if len(carry) else chunk), len(chunk)
            if first and skip_leading_newline and got and data[0] == 10:
                data, got = data[1:], got - 1
                pos += 1
            first = False
            if not got:
                break
            arr = np.frombuffer(data, dtype=np.uint8)
            nl = _newlines(arr)
            if len(nl) == 0:
                carry = data
                if into is not None:  # (the next read copies it to the start of its own room)
                    into.give_back(len(data))
                if state.damaged:
                    break
                continue
            starts = np.empty(len(nl) + 1, dtype=np.int64)
            starts[0] = 0
            starts[1:] = nl + 1
            block = _block(data, starts, line_no, pos)
            state.line_offsets.append(block.offsets)
            line_no += len(nl)
            cut = int(nl[-1]) + 1
            carry = data[cut:]
            pos += cut
            state.consumed_bytes = pos
            state.consumed_lines = line_no - 1
            state.ends_newline = True
            yield block
            if state.damaged:
                break
            if max_bytes is not None and pos - state.start_offset >= max_bytes:
                state.more = True
                return
    if state.damaged:  # the cut line and whatever followed it: one reject at the cut line's number
        state.damaged_line, state.damaged_excerpt = line_no, bytes(carry[:120])
        state.consumed_bytes, state.consumed_lines = pos + len(carry), line_no
        return
    if len(carry):
        if _parses(bytes(carry)):
            starts = np.array([0, len(carry)], dtype=np.int64)
            block = _block(carry, starts, line_no, pos)
            state.line_offsets.append(block.offsets)
            state.consumed_bytes = pos + len(carry)
            state.consumed_lines = line_no
            state.ends_newline = False
            yield block
        else:
            state.pending_bytes = len(carry)
            if not state.consumed_bytes:
                state.consumed_bytes = state.start_offset
                state.consumed_lines = state.start_line - 1
    elif not state.consumed_bytes:
        state.consumed_bytes = pos
        state.consumed_lines = state.start_line - 1


def read_array(
    con: duckdb.DuckDBPyConnection, path: Path, compression: str, state: ReadState
) -> Iterator[LineBlock] | None:
    """A line format's records saved as one JSON array: its elements as lines 1.. (each as DuckDB writes
    the element back, minified), in one DuckDB pass. None when the file is not one valid JSON array (cut
    while written, two arrays, ...): it is then read line by line like any file of its format."""
    with open_binary(path, compression) as fh:
        data, err = read_some(fh, None, compression)
    if err is not None:
        return None
    doc = "(SELECT try(decode($b::BLOB)) AS d)"
    q = f"SELECT CASE WHEN json_valid(d) THEN json_type(d) = 'ARRAY' ELSE false END FROM {doc}"
    ok = con.execute(q, {"b": data})
    if not ok.fetchall()[0][0]:
        return None
    elements = con.sql(
        "SELECT encode(x.e::VARCHAR) AS raw FROM (SELECT unnest(list_transform(json_extract(d, '$[*]'), "
        f"lambda e, i: {{'i': i, 'e': e}})) AS x FROM {doc}) ORDER BY x.i",
        params={"b": data},
    ).to_arrow_table()
    raw = elements.column("raw").combine_chunks().cast(pa.large_binary()) if elements.num_rows else None
    state.consumed_bytes, state.consumed_lines, state.ends_newline = len(data), elements.num_rows, True
    if raw is None:
        return iter(())
    offsets = np.zeros(len(raw), dtype=np.int64)  # elements have no byte offsets of their own
    state.line_offsets.append(offsets)
    return iter([LineBlock(first_line=1, raw=cast(pa.LargeBinaryArray, raw), offsets=offsets)])


class Arena:
    """The memory a run's plain-file reads go into, reused batch after batch. A fresh `read(n)` of a 64 MB block
    is fresh pages every block (malloc maps a block that size and unmaps it when freed), paid in page faults,
    and each block was copied once more behind the unfinished line before it (`carry + chunk`). Here a block is
    read into the room after that line's bytes. Rooms are handed out in order; `reset` once DuckDB no longer
    reads the batch's lines (the next batch's start: they are staged zero-copy). Reading the 1 GB file of
    `bench_ingest.py` into staged blocks: 1.08-1.15 -> 0.49-0.52 CPU s, 394k -> 2k page faults (numpy asks for
    huge pages for a room); in the whole ingest 1.72-1.79M -> 1.33-1.37M faults."""

    ROOM = BLOCK + (1 << 20)  # a 64 MB block behind an unfinished line of up to 1 MB fits one room
    KEEP = 4  # rooms kept from batch to batch (a chunk of a big file takes two)

    def __init__(self) -> None:
        self.rooms: list[np.ndarray] = []
        self.i = 0  # the room being filled
        self.at = 0  # its first free byte

    def read(self, fh: BinaryIO, carry: bytes | np.ndarray, want: int) -> tuple[np.ndarray, int]:
        """`carry` followed by up to `want` bytes of `fh`, and how many were read."""
        k = len(carry)
        buf = self._take(k + want)
        if k:  # (when carry is the start of this very room, given back, this copies it onto itself)
            buf[:k] = np.frombuffer(carry, dtype=np.uint8) if isinstance(carry, bytes) else carry
        got = cast("io.BufferedReader", fh).readinto(buf.data[k:]) or 0
        self.at += k + got
        return buf[: k + got], got

    def give_back(self, n: int) -> None:
        """Unkeep the last read's n bytes (a line still unfinished: the next read starts with it)."""
        self.at -= n

    def reset(self) -> None:
        self.rooms = [r for r in self.rooms if len(r) <= self.ROOM][: self.KEEP]  # (a huge line's room is freed)
        self.i = self.at = 0

    def _take(self, n: int) -> np.ndarray:
        while self.i < len(self.rooms):
            room = self.rooms[self.i]
            if self.at + n <= len(room):
                return room[self.at : self.at + n]
            self.i, self.at = self.i + 1, 0
        self.rooms.append(np.empty(max(n, self.ROOM), dtype=np.uint8))
        self.i, self.at = len(self.rooms) - 1, 0
        return self.rooms[-1][:n]


def _want(fh: BinaryIO, step: int, compression: str) -> int:
    """Bytes to ask for: a plain file's read(n) allocates n bytes up front (a 64 MB buffer for every small
    file, paid in page faults), so ask for what a regular file holds now, plus 64 KB (a file that grows while
    read reads on in the next steps); a pipe or a compressed stream takes the step."""
    if compression != "none":
        return step
    st = os.fstat(fh.fileno())
    if not stat.S_ISREG(st.st_mode):
        return step
    return min(step, max(st.st_size - fh.tell(), 0) + 65536)


def _block(data: bytes | np.ndarray, starts: np.ndarray, line_no: int, pos: int) -> LineBlock:
    n = len(starts) - 1
    raw = pa.LargeBinaryArray.from_buffers(pa.large_binary(), n, [None, pa.py_buffer(starts), pa.py_buffer(data)])
    return LineBlock(first_line=line_no, raw=raw, offsets=starts[:-1] + pos)


def _parses(tail: bytes) -> bool:
    if not tail.strip():
        return True  # trailing blank bytes: a blank line, not a truncated record
    try:
        json.loads(tail)
        return True
    except (ValueError, UnicodeDecodeError):
        return False
    except RecursionError:  # complete enough to nest deeper than Python decodes: DuckDB parses or rejects it
        return True


def _discard(fh: BinaryIO, n: int) -> None:
    while n > 0:
        got = fh.read(min(n, BLOCK))
        if not got:
            break
        n -= len(got)
