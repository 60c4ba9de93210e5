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

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, cast

import duckdb
import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from stallscan.replay import scan_apart
from stallscan.replay.scan_write import write_all
from stallscan.store import arrow, sql

FETCH_ROWS = 1 << 20  # rows per Arrow batch of a fetch
Int = npt.NDArray[np.int64]
Bool = npt.NDArray[np.bool_]


@dataclass
class Walk:
    """Columns of one fetch in walk order (session-grouped, seq ascending)."""

    cols: dict[str, npt.NDArray[Any]]
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
    return _np(sql.relation(con, f"replay/{name}").to_arrow_table().column("rid"), np.int64)


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
    if where is not None:
        rid = _np(table.column("rid"), np.int64)
        if len(rid) > 1 and bool((rid[1:] < rid[:-1]).any()):  # (a parallel read may hand rows out of order)
            table = table.take(arrow.from_numpy(np.argsort(rid, kind="stable")))
    with sql.timed(f"scan order {name}"):
        return walk_of(table)


def walk_of(table: pa.Table) -> Walk:
    """The rows of `table` (columns rid, session_id, seq, ...; rid unique) in walk order."""
    return _walk(table, None)


def _walk(table: pa.Table, runs: tuple[pa.Array, Int] | None) -> Walk:
    """walk_of, given the table's runs of session ids (`_runs`, adjacent heads distinct) when the caller has
    them already (`batches` carries them from batch to batch: each pair of adjacent ids compared once)."""
    n = table.num_rows
    rid = _np(table.column("rid"), np.int64)
    if n > 1 and not bool(np.all(rid[1:] > rid[:-1])):  # storage order is what the positional read pairs with
        # (a plain projection of events keeps it; were it lost, put the rows back in rowid order)
        table = table.take(arrow.from_numpy(np.argsort(rid, kind="stable")))
        rid = _np(table.column("rid"), np.int64)
        runs = None
    sess = table.column("session_id")
    seq = _np(table.column("seq"), None)  # (as fetched: INTEGER, no int64 copy; only compared and sorted)
    perm = None
    if n > 1:
        if runs is None:
            changed = _np(pc.not_equal(sess.slice(1), sess.slice(0, n - 1)), np.bool_)
            # (the distinct ids of the runs' first rows are every distinct id: counted on those rows only)
            at = np.flatnonzero(np.concatenate(([True], changed)))
            heads, lengths = sess.take(arrow.from_numpy(at)).combine_chunks(), np.diff(np.append(at, n))
        else:
            heads, lengths = runs
            changed = np.zeros(n, dtype=np.bool_)
            changed[np.cumsum(lengths)[:-1]] = True
            changed = changed[1:]
        # each run's session as a code (in order of first appearance), from one id per run, not per row
        run_codes = _np(pc.dictionary_encode(heads).indices, np.int64)
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
        arr = _np(col, None)
        cols[c] = arr if perm is None else arr[perm]
    starts = np.ones(n, dtype=np.bool_)
    if n > 1:
        if perm is None:
            starts[1:] = changed
        else:  # (the sessions in the order of their codes, each after the rows of the codes below it)
            starts[1:] = False
            starts[np.cumsum(np.bincount(run_codes, weights=lengths).astype(np.int64))[:-1]] = True
    return Walk(cols, texts, starts, perm, n)


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


def _np(col: pa.ChunkedArray | pa.Array, dtype: Any) -> npt.NDArray[Any]:
    """A column without nulls as numpy (the fetch queries coalesce every column they hand over)."""
    if col.null_count:
        raise RuntimeError("scan columns must not hold NULL (coalesce them in the fetch query)")
    return arrow.to_numpy(col, dtype)  # (Array.to_numpy imports pandas)


# -- batches of whole sessions (the stall replay's scans; docs/replay-scan.md, "Memory by default") --


class Interleaved(Exception):
    """The storage order does not keep sessions together across batches: batching cannot be used."""


def batch_rows() -> int:
    """Rows per batch of a batched scan: $STALLSCAN_SCAN_BATCH_ROWS, else from the process's memory budget
    (stallscan.store.db.memory_budget): about 250 bytes a row (the fetched columns, the scans' int64
    temporaries, the output; on an ingest's storage order also the carried rows and each batch's sort) in an
    eighth of it, between 2^16 and 2^22 rows (1.07 million at 2 GiB)."""
    import os

    env = os.environ.get("STALLSCAN_SCAN_BATCH_ROWS", "").strip()
    if env:
        return max(1, int(env))
    from stallscan.store.db import memory_budget

    return max(1 << 16, min(1 << 22, memory_budget() // 2000 // _SHARING[0]))


_SHARING = [1]  # scans running at once in this process (stallscan.replay.together), each with its share


@contextmanager
def sharing(n: int) -> Iterator[None]:
    """Inside: n replays scan at once, so batch_rows() gives each an n-th of the budget's share."""
    _SHARING[0] = n
    try:
        yield
    finally:
        _SHARING[0] = 1


def batches(
    con: duckdb.DuckDBPyConnection,
    name: str,
    end: int,
    rows: int,
    drop: Int | None = None,
    tail: pa.Array | None = None,
) -> Iterator[Walk]:
    """Walks over whole sessions of queries/replay/<name>.sql (a projection of a table with `WHERE rowid >=
    $lo AND rowid < $hi`), read by rowid ranges of `rows` below `end`, each range a query of its own (so the
    caller may write between two batches). At a range's end the rows read are cut at the last point no
    session's rows straddle, the sessions that go on in the next range counting as never ending (`_cut`): the
    rows before it are walked, the rest carried (a session stored in several runs, as an ingest batch appends
    its reader's branches one after another, is walked whole, sorted in `_walk`); so the walks come in rising
    rowid order. Raises Interleaved when a session comes back after it was scanned (a grown session appended
    later). drop: rowids (ascending) whose rows are left out (`scan_into`'s sessions walked apart). tail: the
    session ids of the last range's rows (`scan_apart.tail`): a session of it walked before that range is read
    will come back, so Interleaved is raised then, not at the table's end."""
    done: list[pa.Array] = []  # the session ids already scanned
    pending: pa.Table | None = None  # rows read, not scanned yet (storage order)
    # pending's runs (arrow.strings, not pa.array: pyarrow would import pandas to build from a list)
    pruns: tuple[pa.Array, Int] = (arrow.strings([]), np.zeros(0, dtype=np.int64))
    last = -1  # the largest rowid of the walks handed out
    for lo in range(0, end, rows):
        with sql.timed(f"scan fetch {name}"):
            con.complete()
            batch = sql.relation(con, f"replay/{name}", {"lo": lo, "hi": lo + rows}).to_arrow_table()
        if drop is not None:
            batch = scan_apart.without(batch, drop)
        if not batch.num_rows:
            continue
        bruns = _runs(batch)  # (the only comparison of adjacent ids: the runs are carried with the rows)
        nxt = pc.unique(bruns[0])
        if pending is not None:  # scan the rows up to the last cut no session straddles, carry the rest
            heads, lengths = pruns
            j = _cut(heads, _np(pc.is_in(heads, value_set=nxt), np.bool_))
            k = int(lengths[:j].sum())
            ready, pending = pending.slice(0, k), pending.slice(k)
            rruns, pruns = (heads[:j], lengths[:j]), (heads[j:], lengths[j:])
            if ready.num_rows:
                if pc.min(ready.column("rid")).as_py() <= last:
                    raise Interleaved
                last = pc.max(ready.column("rid")).as_py()
                done.append(pc.unique(rruns[0]))
                if tail is not None and lo + rows < end and pc.any(pc.is_in(done[-1], value_set=tail)).as_py():
                    raise Interleaved  # (early: a grown session's new rows at the table's end)
                yield _walk(ready, rruns)
        # (the scanned ids looked up in a set of this batch's: building the set of every scanned id, batch after
        # batch, cost ~9x as much as looking them up)
        if done and pc.any(pc.is_in(pa.chunked_array(done), value_set=nxt)).as_py():
            raise Interleaved  # a session already scanned goes on here
        if pending is None:
            pending, pruns = batch, bruns
        else:
            pending = pa.concat_tables([pending, batch])
            pruns = _merge(pa.concat_arrays([pruns[0], bruns[0]]), np.concatenate((pruns[1], bruns[1])))
    if pending is not None:
        if pending.num_rows and pc.min(pending.column("rid")).as_py() <= last:
            raise Interleaved
        yield _walk(pending, pruns)


def _cut(heads: pa.Array, runs_on: Bool) -> int:
    """The number of leading runs (of `heads`, storage order) that hold whole sessions and nothing after them:
    the last run i where no session of runs 0..i has a run after i and none goes on into the next range
    (runs_on; such a session counts as never ending): a running maximum of each run's session's last run
    against the run's own position. 0: no such cut (everything is carried)."""
    m = len(heads)
    if m == 0:
        return 0
    codes = _np(pc.dictionary_encode(heads).indices, np.int64)
    last = np.full(int(codes.max()) + 1, -1, dtype=np.int64)
    np.maximum.at(last, codes, np.arange(m, dtype=np.int64))
    ends = last[codes]
    ends[runs_on] = m  # (every run of a session that goes on: it ends after all of them)
    ok = np.flatnonzero(np.maximum.accumulate(ends) == np.arange(m))
    return int(ok[-1]) + 1 if len(ok) else 0


def _runs(table: pa.Table) -> tuple[pa.Array, Int]:
    """The session id of each run of equal adjacent session ids in `table` (storage order) and the run lengths:
    the set operations of `batches` hash one id per run, not one per row (a session is usually one run)."""
    sess = table.column("session_id").combine_chunks()
    n = len(sess)
    if n == 0:
        return sess, np.zeros(0, dtype=np.int64)
    at = np.flatnonzero(np.concatenate(([True], _np(pc.not_equal(sess[1:], sess[:-1]), np.bool_))))
    return sess.take(arrow.from_numpy(at)), np.diff(np.append(at, n))


def _merge(heads: pa.Array, lengths: Int) -> tuple[pa.Array, Int]:
    """Runs put side by side (`_runs` of two tables, or some runs of one) with adjacent equal heads joined: one
    comparison per run, not per row."""
    if len(heads) < 2:
        return heads, lengths
    same = _np(pc.equal(heads[1:], heads[:-1]), np.bool_)
    if not same.any():
        return heads, lengths
    keep = np.concatenate(([True], ~same))
    return heads.filter(arrow.from_numpy(keep)), np.bincount(np.cumsum(keep) - 1, weights=lengths).astype(np.int64)


def scan_into(
    con: duckdb.DuckDBPyConnection,
    name: str,
    source: str,
    out: str | None,
    step: Callable[[Walk], dict[str, Any]],
    rows: int | None = None,
    sides: tuple[str, ...] = (),
) -> None:
    """(Re)create the temp table `out`: `step`'s storage-order columns (after the rowid `rid`) for every row of
    `source`, computed over batches of whole sessions (`batches`), one batch's columns in Python at a time;
    when a session comes back after its walk (`Interleaved`), the sessions that do walked apart and the batched
    walk run again without them, their outputs merged in (`scan_apart.walk_apart`), or, when they are many, over shares of the
    sessions (by a hash of the id; the outputs then put back in rowid order); a table of one batch's rows or less
    at once. `out` holds one row per
    row of `source` in its storage order (read beside it with POSITIONAL JOIN); None: no such table (`step`
    returns its sides only).
    sides: also (re)create each of these temp tables from the columns `step` returns under its name (a dict of
    columns of any length: rows of its own, e.g. one per segment of the walk or one per reply), written batch by
    batch."""
    end = int(cast("tuple[int]", con.execute(f"SELECT coalesce(max(rowid) + 1, 0) FROM {source}").fetchone())[0])
    outs = (*((out,) if out else ()), *sides)

    def part(w: Walk) -> tuple[pa.Table, ...]:
        cols = step(w)
        more = tuple(arrow.table(cols.pop(k)) for k in sides)
        return more if out is None else (arrow.table({"rid": w.cols["rid_storage"], **cols}), *more)

    rows = rows or batch_rows()
    tail = scan_apart.tail(con, (end - 1) // rows * rows) if end > rows else None
    try:
        if write_all(con, outs, (part(w) for w in batches(con, name, end, rows, tail=tail))):
            return
        back = False
    except Interleaved:  # (a session came back after its walk: a grown session's rows at the table's end)
        back = True  # (handled after the except block: its traceback holds the batched walk's rows and parts)
    if back:
        for t in outs:  # (the batched walk's partial outputs: freed before the next walk)
            con.execute(f"DROP TABLE IF EXISTS temp.{t}")
        try:
            if scan_apart.walk_apart(
                con,
                name,
                rows,
                outs,
                part,
                lambda where: fetch(con, name, {"lo": 0, "hi": end}, where),
                lambda drop: batches(con, name, end, rows, drop),
            ):
                return
        except Interleaved:  # (the sessions apart did not hold every one that comes back: the shares)
            pass
        shares = -(-end // rows)
        if shares > 1:  # whole sessions by shares of their ids, each share's rows in storage order, then every
            # output with a rowid put back in rowid order (out and the sides read by position need it)
            with sql.timed(f"scan {name} (shares of the sessions)"):
                write_all(
                    con,
                    outs,
                    (
                        part(fetch(con, name, {"lo": 0, "hi": end}, f"hash(session_id) % {shares} = {i}"))
                        for i in range(shares)
                    ),
                )
                for t in outs:
                    if "rid" in {r[0] for r in con.execute(f"DESCRIBE {t}").fetchall()}:
                        con.execute(f"CREATE OR REPLACE TEMP TABLE {t} AS SELECT * FROM {t} ORDER BY rid")
            return
    with sql.timed(f"scan {name} (whole table)"):  # (also the empty table: step's columns, no rows)
        write_all(con, outs, iter([part(fetch(con, name, {"lo": 0, "hi": end}))]))


def scan_parts(
    con: duckdb.DuckDBPyConnection,
    name: str,
    out: str,
    step: Callable[[Walk], dict[str, Any]],
    parts: int,
) -> None:
    """(Re)create the temp table `out`: `step`'s storage-order columns (after the rowid `rid`) for the rows of
    queries/replay/<name>.sql, run once per share of the sessions (its parameters $part of $parts: each
    share holds whole sessions, in any order). One share's columns are in Python at a time; `out` is read
    by joining on `rid`."""
    parts = max(1, parts)

    def part(i: int) -> pa.Table:
        w = fetch(con, name, {"part": i, "parts": parts})
        return arrow.table({"rid": w.cols["rid_storage"], **step(w)})

    _write(con, out, (part(i) for i in range(parts)))


def _write(con: duckdb.DuckDBPyConnection, out: str, parts: Iterator[pa.Table]) -> bool:
    """Write the parts into the temp table `out` (created by the first); False when there was none."""
    return write_all(con, (out,), ((t,) for t in parts))
