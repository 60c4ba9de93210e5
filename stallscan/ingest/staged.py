"""A batch's lines as DuckDB reads them: its files' blocks staged zero-copy as one Arrow table (`stage_raw`, the
same registered object batch after batch), as Arrow strings when every line is valid UTF-8, with the batch's
`files` rows; and the fids of a staged batch moved on when a flush came between its staging and its write."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from stallscan.ingest.plan import FilePlan, file_stem, has_companion
from stallscan.ingest.read_ahead import Read
from stallscan.ingest.reader import ReadState
from stallscan.store import arrow

if TYPE_CHECKING:
    from stallscan.ingest.result import IngestResult

STAGE_ROWS = 2048  # rows per arrow record batch handed to DuckDB


def longest_line(raw: pa.ChunkedArray) -> int:
    """The longest line's bytes, from each chunk's offsets (pyarrow.compute's max of binary_length costs a 40
    ms import); a chunk with nulls (none is staged so) is measured by pyarrow.compute."""
    most = 0
    for c in raw.chunks:
        if c.null_count:
            from stallscan.store.arrow_compute import compute as pc

            most = max(most, pc.max(pc.binary_length(c)).as_py() or 0)
        elif len(c):
            width = np.int64 if pa.types.is_large_binary(c.type) else np.int32
            at = np.frombuffer(c.buffers()[1], width)[c.offset : c.offset + len(c) + 1]
            most = max(most, int(np.diff(at).max()))
    return most


class Stage:
    """The batch's lines as DuckDB sees them (`stage_raw`): registered once per run, its table swapped per
    batch. An object registered inside a transaction stays referenced until the transaction ends, and the
    ingest transaction spans batches: registering each batch's lines would hold every batch's bytes."""

    def __init__(self) -> None:
        none = np.empty(0, np.int32)
        self.empty = arrow.table(
            {"fid": arrow.from_numpy(none), "line": arrow.from_numpy(none), "raw": arrow.strings([], pa.large_binary())}
        )
        self.table = self.empty  # (registering reads the schema)

    def __arrow_c_stream__(self, requested_schema: object = None) -> object:
        return self.table.__arrow_c_stream__(requested_schema)


def as_text(staged: pa.Table) -> pa.Table | None:
    """The staged lines with `raw` as Arrow strings, when pyarrow finds every line valid UTF-8 (about 0.15 CPU s a
    GB): DuckDB then reads each line's text in place instead of decoding a copy of it (queries/ingest/
    stage_lines_text.sql; docs/benchmarks.md "ing22"). None when a line is not valid UTF-8: stage_lines.sql then
    decodes line by line and keeps such a line as a reject."""
    raw = staged.column("raw")
    if pa.types.is_large_binary(raw.type):
        kind = pa.large_string()
    elif pa.types.is_binary(raw.type):
        kind = pa.string()
    else:
        return None
    try:
        text = pa.chunked_array([c.view(kind) for c in raw.chunks], kind)
        text.validate(full=True)
    except pa.ArrowInvalid:
        return None
    return staged.set_column(staged.schema.get_field_index("raw"), "raw", text)


@dataclass
class Staged:
    """One batch as staged for its parse: its readable files (fids from fid0), their read states and `files` rows,
    its lines (record batches of STAGE_ROWS; Arrow strings when `text`) and the longest line's bytes."""

    batch: list[FilePlan]
    states: list[ReadState]
    files: pa.Table
    lines: pa.Table
    text: bool
    longest: int
    fid0: int
    nbytes: int  # (read: the readable files' bytes)


def stage_batch(reads: list[Read], res: IngestResult, continued: list[FilePlan], fid0: int) -> Staged | None:
    """A batch as read, staged (None when no file of it could be read)."""
    tables: list[pa.Table] = []
    states: list[ReadState] = []
    nbytes = 0
    batch: list[FilePlan] = []
    for r in reads:
        if r.unreadable is not None:
            res.unreadable.append((str(r.plan.path), r.unreadable))
            continue
        tables.extend(block.table(fid0 + len(batch)) for block in r.blocks)  # (unique across the batches tx gathers)
        batch.append(r.plan)
        states.append(r.state)
        nbytes += r.state.consumed_bytes - r.plan.start_offset
        res.pending += 1 if r.state.pending_bytes else 0
        if r.state.more:
            continued.append(r.plan)
    if not batch:
        return None
    # zero-copy staging: DuckDB scans the arrow batches in parallel (small record batches = more threads)
    staged = pa.concat_tables(tables) if tables else Stage().empty
    text = as_text(staged)
    lines = staged if text is None else text  # (not `text or staged`: a table of no rows is false)
    files = arrow.table(
        {
            "fid": arrow.from_numpy(np.arange(fid0, fid0 + len(batch), dtype=np.int32)),
            "file": arrow.strings([str(p.path) for p in batch]),
            "stem": arrow.strings([file_stem(p.path) for p in batch]),
            "fmt": arrow.strings([p.fmt for p in batch]),
            "start_line": arrow.column([p.start_line for p in batch], pa.int32()),
            "ctx_session": arrow.strings([p.ctx_session for p in batch]),
            "ctx_model": arrow.strings([p.ctx_model for p in batch]),
            "ctx_turn": arrow.strings([p.ctx_turn for p in batch]),
            "companion": arrow.column([has_companion(p) for p in batch], pa.bool_()),
            "more": arrow.column([st.more for st in states], pa.bool_()),  # read on in a next chunk
        }
    )
    return Staged(
        batch,
        states,
        files,
        pa.Table.from_batches(lines.to_batches(max_chunksize=STAGE_ROWS), lines.schema),
        text is not None,
        longest_line(staged.column("raw")),
        fid0,
        nbytes,
    )


def shift_fids(table: pa.Table, by: int) -> pa.Table:
    at = table.schema.get_field_index("fid")
    fids = table.column(at).to_numpy() + by
    return table.set_column(at, "fid", arrow.from_numpy(fids.astype(np.int32)))
