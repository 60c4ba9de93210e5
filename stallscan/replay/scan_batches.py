"""Batched column scans: the walks of `stallscan/replay/scan.py` over batches of whole sessions (issue 21).

`scan_into` (re)creates a temp table of a scan's per-row results (and side tables of its own rows) by reading
the source by rowid ranges of `batch_rows()` rows (`batches`), cutting each range's rows where no session
straddles and carrying the rest, so one batch's columns are in Python at a time and the walks come in rising
rowid order. A session that comes back after its walk (a grown transcript's new lines at the table's end:
`Interleaved`) is walked apart (`stallscan/replay/scan_apart.py`), or the sessions in shares of their ids.
`scan_parts` runs a scan once per share of the sessions (the re-prompt walk). docs/replay-scan.md, "Memory by
default", inter18, grow19, walk19.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, cast

import duckdb
import numpy as np
import pyarrow as pa

from stallscan.replay import scan_apart
from stallscan.replay.scan import Bool, Int, Walk, column_np, fetch, walk_runs
from stallscan.replay.scan_write import write_all
from stallscan.store import arrow, sql
from stallscan.store.arrow_compute import compute as pc


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
    its reader's branches one after another, is walked whole, sorted in `walk_runs`); so the walks come in rising
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
            j = _cut(heads, column_np(pc.is_in(heads, value_set=nxt), np.bool_))
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
                yield walk_runs(ready, rruns)
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
        yield walk_runs(pending, pruns)


def _cut(heads: pa.Array, runs_on: Bool) -> int:
    """The number of leading runs (of `heads`, storage order) that hold whole sessions and nothing after them:
    the last run i where no session of runs 0..i has a run after i and none goes on into the next range
    (runs_on; such a session counts as never ending): a running maximum of each run's session's last run
    against the run's own position. 0: no such cut (everything is carried)."""
    m = len(heads)
    if m == 0:
        return 0
    codes = column_np(pc.dictionary_encode(heads).indices, np.int64)
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
    at = np.flatnonzero(np.concatenate(([True], column_np(pc.not_equal(sess[1:], sess[:-1]), np.bool_))))
    return pc.take(sess, arrow.from_numpy(at)), np.diff(np.append(at, n))


def _merge(heads: pa.Array, lengths: Int) -> tuple[pa.Array, Int]:
    """Runs put side by side (`_runs` of two tables, or some runs of one) with adjacent equal heads joined: one
    comparison per run, not per row."""
    if len(heads) < 2:
        return heads, lengths
    same = column_np(pc.equal(heads[1:], heads[:-1]), np.bool_)
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
    `source`, computed over batches of whole sessions (`batches`), one batch's columns in Python at a time. When a
    session comes back after its walk (`Interleaved`), the sessions that do are walked apart and the batched walk
    runs again without them, their outputs merged in (`scan_apart.walk_apart`); when they are many, over shares of
    the sessions (by a hash of the id; the outputs then put back in rowid order); a table of one batch's rows or
    less at once. `out` holds one row per row of `source` in its storage order (read beside it with POSITIONAL
    JOIN); None: no such table (`step` returns its sides only).
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
