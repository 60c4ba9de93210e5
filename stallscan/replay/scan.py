"""The sequential parts of the replay as vectorised segmented scans (issue 21).

A walk over a session in seq order (a running count of turn starts, the last reply before an event, ...) is
one pass over narrow columns once the rows are grouped by session and ordered by seq. `fetch(con, name)`
runs `queries/replay/<name>.sql` (a projection of `events` that names `rid` = the events' rowid, `session_id`
and `seq` first) and returns its columns as numpy arrays in the walk order:

* rows come back in the table's storage order (no sort). Where that order is already grouped by session with
  seq ascending (the scan checks: adjacent session ids, one run per session, seq rising inside each run) it is
  used as it is;
* otherwise (a database that `stallscan ingest` writes: a session lies in a few runs spread over its ingest
  batch, seq stepping back between them, docs/benchmarks.md "layout18") it orders the rows once by (session,
  seq) with a stable numpy sort of one int64 key (`_order`: the session ids dictionary-encoded one per run of
  equal ids, in order of first appearance, and seq), which merges the key's rising runs: the only sort of the walk.

The segmented operations (`seg_cumsum`, `prev_where`) then work on whole columns at once: no loop over
events or sessions in Python. `Walk.to_storage` puts a result column back into storage order, and
`Walk.register` hands the results to DuckDB as an Arrow table aligned row for row with `events`, which the
SQL reads with a POSITIONAL JOIN (each row checks that its rowid is the one the scan fetched, so a
misaligned read fails loudly instead of mixing events).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import duckdb
import numpy as np
import numpy.typing as npt
import pyarrow as pa

from stallscan.store import arrow, sql
from stallscan.store.arrow_compute import compute as pc

FETCH_ROWS = 1 << 20  # rows per Arrow batch of a fetch
Int = npt.NDArray[np.int64]
Bool = npt.NDArray[np.bool_]


class Cols(Mapping[str, npt.NDArray[Any]]):
    """A walk's numeric columns in walk order, each gathered through the permutation when first read (a column
    the step reads only at a few positions, `at`, or not at all is never gathered whole: on an ingest's storage
    order each gather of a batch's column is a pass over it in random order)."""

    def __init__(self, stored: dict[str, npt.NDArray[Any]], perm: Int | None) -> None:
        self._stored, self._perm = stored, perm
        self._walked: dict[str, npt.NDArray[Any]] = {}

    def __getitem__(self, name: str) -> npt.NDArray[Any]:
        if self._perm is None or name == "rid_storage":  # (the rowids stay in storage order)
            return self._stored[name]
        got = self._walked.get(name)
        if got is None:
            got = self._walked[name] = self._stored[name][self._perm]
        return got

    def at(self, name: str, pos: Int) -> npt.NDArray[Any]:
        """Column `name` at walk positions `pos` (self[name][pos] without gathering the column whole; for
        rid_storage: the rowids of the rows at those walk positions)."""
        if self._perm is None or name in self._walked:
            return self._stored[name][pos] if self._perm is None else self._walked[name][pos]
        return self._stored[name][self._perm[pos]]

    def stored(self, name: str) -> npt.NDArray[Any]:
        """Column `name` in storage order (as fetched)."""
        return self._stored[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._stored)

    def __len__(self) -> int:
        return len(self._stored)


@dataclass
class Walk:
    """Columns of one fetch in walk order (session-grouped, seq ascending)."""

    cols: Mapping[str, npt.NDArray[Any]]
    texts: dict[str, pa.ChunkedArray]  # string columns, in storage order
    starts: Bool  # first row of its session
    perm: Int | None  # walk position -> storage position (None: storage order is the walk order)
    n: int

    def seg_start(self) -> Int:
        """Walk position of the first row of each row's session."""
        return seg_start(self.starts)

    def seg_cumsum(self, x: npt.NDArray[Any]) -> Int:
        """Running sum of x inside each session, the row itself included (SQL: sum() OVER (PARTITION BY
        session ORDER BY seq ROWS UNBOUNDED PRECEDING))."""
        return seg_cumsum(x, self.starts)

    def prev_where(self, mask: Bool) -> Int:
        """Walk position of the last row before each row, in its session, where mask holds; -1 when none."""
        at = np.flatnonzero(mask)  # the rows where it holds, ascending
        if not len(at):
            return np.full(self.n, -1, dtype=np.int64)
        before = np.cumsum(mask, dtype=np.int64)
        before -= mask  # how many of them come before each row: the last is at[before - 1]
        prev = np.where(before > 0, at[np.maximum(before - 1, 0)], -1)
        prev[prev < self.seg_start()] = -1
        return prev

    def stored(self, name: str) -> npt.NDArray[Any]:
        """Numeric column `name` in storage order (as fetched: no gather)."""
        if isinstance(self.cols, Cols):
            return self.cols.stored(name)
        return self.to_storage(self.cols[name])

    def at(self, name: str, pos: Int) -> npt.NDArray[Any]:
        """Numeric column `name` at walk positions `pos` (for rid_storage: the rowids of those rows)."""
        if isinstance(self.cols, Cols):
            return self.cols.at(name, pos)
        col = self.cols[name]
        return col[pos] if self.perm is None or name != "rid_storage" else col[self.perm[pos]]

    def to_storage(self, x: npt.NDArray[Any]) -> npt.NDArray[Any]:
        """A walk-order column in storage order (a scatter, not a sort)."""
        if self.perm is None:
            return x
        out = np.empty_like(x)
        out[self.perm] = x
        return out

    def positions_to_storage(self, pos: Int) -> Int:
        """Walk positions (-1: none) as storage positions, in walk order."""
        if self.perm is None:
            return pos
        return np.where(pos >= 0, self.perm[np.maximum(pos, 0)], -1)

    def mark(self, con: duckdb.DuckDBPyConnection, name: str) -> Bool:
        """Walk-order flags: True for the rows whose rowid queries/replay/<name>.sql returns (column rid, any
        order; found by binary search in the ascending storage rowids, so no join reorders the scan)."""
        with sql.timed(f"scan mark {name}"):
            return self.mark_rids(fetch_rids(con, name))

    def mark_rids(self, hits: Int) -> Bool:
        """Walk-order flags: True for the rows whose rowid is in `hits` (any order; rowids of other rows
        are ignored, so one list serves every batch)."""
        rids = self.cols["rid_storage"]
        pos = np.searchsorted(rids, hits)
        ok = pos < len(rids)
        pos = pos[ok][rids[pos[ok]] == hits[ok]]
        flags = np.zeros(self.n, dtype=np.bool_)
        flags[pos] = True  # storage order
        return flags if self.perm is None else flags[self.perm]

    def take_storage(self, name: str, pos: Int) -> pa.Array:
        """Values of string column `name` at storage positions `pos` (in storage order; -1: NULL)."""
        idx = arrow.from_numpy(pos, mask=pos < 0)
        return pc.take(self.texts[name], idx)

    def register(self, con: duckdb.DuckDBPyConnection, name: str, columns: dict[str, Any]) -> None:
        """Register `name`: the fetched rowids and the given storage-order columns (numpy or Arrow arrays)."""
        table = arrow.table({"rid": self.cols["rid_storage"], **columns})
        con.register(name, table)


def fetch_rids(con: duckdb.DuckDBPyConnection, name: str) -> Int:
    """The column rid of queries/replay/<name>.sql as numpy (for Walk.mark_rids)."""
    return column_np(sql.relation(con, f"replay/{name}").to_arrow_table().column("rid"), np.int64)


def seg_start(starts: Bool) -> Int:
    """Position of the first row of each row's segment (segments: runs that begin where starts is True; the rows
    before the first such row, if any, are a segment beginning at 0). Each segment's start repeated over its
    length: about 20x less time than a running maximum of the start positions at 1.25M rows in 60-row segments."""
    n = len(starts)
    at = np.flatnonzero(starts).astype(np.int64)
    if n and (not len(at) or at[0] != 0):
        at = np.concatenate((np.zeros(1, dtype=np.int64), at))
    return np.repeat(at, np.diff(np.append(at, n)))


def seg_cumsum(x: npt.NDArray[Any], starts: Bool) -> Int:
    """Running sum of x inside each segment, the row itself included."""
    c = np.cumsum(x, dtype=np.int64)
    before = c - x.astype(np.int64)  # the running sum before each row
    return c - before[seg_start(starts)] if len(c) else c


def seg_ids(starts: Bool) -> Int:
    """Segment number of each row (0, 1, ...)."""
    return np.cumsum(starts, dtype=np.int64) - 1


def seg_any(x: Bool, starts: Bool) -> Bool:
    """Whether x holds on any row of each row's segment, on every row of it."""
    g = seg_ids(starts)
    return np.bincount(g, weights=x, minlength=int(g[-1]) + 1 if len(g) else 0)[g] > 0


def seg_sum(x: npt.NDArray[Any], starts: Bool) -> Int:
    """Sum of x over each row's segment, on every row of it."""
    g = seg_ids(starts)
    return np.bincount(g, weights=x, minlength=int(g[-1]) + 1 if len(g) else 0).astype(np.int64)[g]


def fetch(
    con: duckdb.DuckDBPyConnection, name: str, params: dict[str, Any] | None = None, where: str | None = None
) -> Walk:
    """Run queries/replay/<name>.sql (its last statement a SELECT) and return its columns in walk order.
    where: a filter on its rows (their storage order kept: rid rising)."""
    with sql.timed(f"scan fetch {name}"):
        con.complete()  # (a DB-API result left half read, e.g. by fetchone(), would block the relation)
        rel = sql.relation(con, f"replay/{name}", params)
        # streamed in batches, not materialised whole inside DuckDB and then copied to Arrow (twice the memory)
        table = (rel if where is None else rel.filter(where)).to_arrow_reader(FETCH_ROWS).read_all()
    # (a filtered parallel read may hand rows out of order: walk_of puts them back in rowid order)
    with sql.timed(f"scan order {name}"):
        return walk_of(table)


def walk_of(table: pa.Table) -> Walk:
    """The rows of `table` (columns rid, session_id, seq, ...; rid unique) in walk order."""
    return walk_runs(table, None)


def walk_runs(table: pa.Table, runs: tuple[pa.Array, Int] | None) -> Walk:
    """walk_of, given the table's runs of session ids (`scan_batches._runs`, adjacent heads distinct) when the caller has
    them already (`batches` carries them from batch to batch: each pair of adjacent ids compared once)."""
    n = table.num_rows
    rid = column_np(table.column("rid"), np.int64)
    if n > 1 and not bool(np.all(rid[1:] > rid[:-1])):  # storage order is what the positional read pairs with
        # (a plain projection of events keeps it; were it lost, put the rows back in rowid order)
        table = pc.take(table, arrow.from_numpy(np.argsort(rid, kind="stable")))
        rid = column_np(table.column("rid"), np.int64)
        runs = None
    sess = table.column("session_id")
    seq = column_np(table.column("seq"), None)  # (as fetched: INTEGER, no int64 copy; only compared and sorted)
    perm = None
    if n > 1:
        if runs is None:
            changed = column_np(pc.not_equal(sess.slice(1), sess.slice(0, n - 1)), np.bool_)
            # (the distinct ids of the runs' first rows are every distinct id: counted on those rows only)
            at = np.flatnonzero(np.concatenate(([True], changed)))
            heads, lengths = pc.take(sess, arrow.from_numpy(at)).combine_chunks(), np.diff(np.append(at, n))
        else:
            heads, lengths = runs
            changed = np.zeros(n, dtype=np.bool_)
            changed[np.cumsum(lengths)[:-1]] = True
            changed = changed[1:]
        # each run's session as a code (in order of first appearance), from one id per run, not per row
        run_codes = column_np(pc.dictionary_encode(heads).indices, np.int64)
        distinct = int(run_codes.max()) + 1
        grouped = len(run_codes) == distinct  # (one run per session)
        # (seq rising but where the session changes: one pass, where the masked comparison copied both sides)
        if not grouped or not bool(np.all((seq[1:] > seq[:-1]) | changed)):
            perm = _order(run_codes, lengths, distinct, seq)
    cols: dict[str, npt.NDArray[Any]] = {"rid_storage": rid}
    texts: dict[str, pa.ChunkedArray] = {}
    for c in table.column_names:
        if c == "session_id":
            continue
        col = table.column(c)
        if pa.types.is_string(col.type) or pa.types.is_large_string(col.type):
            texts[c] = col  # kept as Arrow, in storage order (read with Walk.take)
            continue
        # (gathered into walk order when read: Cols; rid and seq as converted above, not converted again)
        cols[c] = rid if c == "rid" else seq if c == "seq" else column_np(col, None)
    starts = np.ones(n, dtype=np.bool_)
    if n > 1:
        if perm is None:
            starts[1:] = changed
        else:  # (the sessions in the order of their codes, each after the rows of the codes below it)
            starts[1:] = False
            starts[np.cumsum(np.bincount(run_codes, weights=lengths).astype(np.int64))[:-1]] = True
    return Walk(Cols(cols, perm), texts, starts, perm, n)


def _order(run_codes: Int, lengths: Int, distinct: int, seq: npt.NDArray[Any]) -> Int:
    """The rows ordered by (session code, seq), stable, given each run's code (0 .. distinct - 1, in order of first
    appearance) and length: one int64 key `code << 32 | seq - min(seq)` sorted by numpy's stable sort (a timsort,
    which finds the key's rising runs: each run of a session in storage order with seq rising is one, so an ingest
    batch's rows are a merge of a few runs, not a full sort; np.lexsort of the two columns sorts both in full:
    about 8x the time), or np.lexsort when seq is not within INTEGER's range."""
    lo, hi = int(seq.min()), int(seq.max())
    if seq.dtype.kind in "iu" and lo >= -(1 << 31) and hi < 1 << 31 and distinct <= 1 << 31:
        key = np.repeat((run_codes << 32) - lo, lengths)  # (no overflow: |lo| <= 2^31, code < 2^31)
        np.add(key, seq, out=key, casting="unsafe")  # (seq within INTEGER's range: exact)
        return np.argsort(key, kind="stable")
    return np.lexsort((seq, np.repeat(run_codes, lengths))).astype(np.int64)


def column_np(col: pa.ChunkedArray | pa.Array, dtype: Any) -> npt.NDArray[Any]:
    """A column without nulls as numpy (the fetch queries coalesce every column they hand over)."""
    if col.null_count:
        raise RuntimeError("scan columns must not hold NULL (coalesce them in the fetch query)")
    return arrow.to_numpy(col, dtype)  # (Array.to_numpy imports pandas)
