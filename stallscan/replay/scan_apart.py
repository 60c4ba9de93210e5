"""The sessions that come back after their walk, walked apart (issue 21; stallscan/replay/scan_batches.py `scan_into`).

A batched scan (`scan_batches.batches`) reads a table by rowid ranges and walks a session once no row of it is left in
the next range; a session whose rows skip a whole range and then go on (a grown transcript's new lines at the
table's end) comes back after its walk (`scan_batches.Interleaved`). Such a session has a gap in the ranges that hold
its rows, and one without a gap cannot come back: its rows lie in consecutive ranges, and a range that holds
some of them keeps it carried. So:

* `gapped` finds those sessions (one aggregate of (session, range) over the table, only on this path:
  queries/replay/scan_gapped.sql);
* `walk_apart` walks them at once (one filtered fetch: they are few), runs the batched scan with their rows
  left out of every range (`without`), which then cannot raise;
* `merged` puts their output rows into the batched parts as they are written: each batched walk covers a
  rising rowid range, so the set-apart rows up to its last rowid go in with it, in rowid order (a
  searchsorted and a few slices), and the rest after the last part. Outputs without a rowid (rows of their
  own) only need all their rows: the set-apart part's go at the end.

The outputs are the batched scan's would be over a table without the grow, row for row, with no sort of the
outputs afterwards (the shares fallback rewrote each `ORDER BY rid`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import duckdb
import numpy as np
import numpy.typing as npt
import pyarrow as pa

from stallscan.replay.scan_write import write_all
from stallscan.store import arrow, sql

Int = npt.NDArray[np.int64]
APART_ROWS = 1 << 16  # the sessions apart may hold this many rows even when a batch holds fewer (tests' batches)
SLICES = 64  # at most this many pieces of a part when merging (else one take of the whole part)


def walk_apart(
    con: duckdb.DuckDBPyConnection,
    name: str,
    rows: int,
    outs: tuple[str, ...],
    part: Callable[[Any], tuple[pa.Table, ...]],
    fetch: Callable[[str], Any],
    batched: Callable[[Int], Iterator[Any]],
) -> bool:
    """`scan_batches.scan_into` after Interleaved: the sessions that break the batched walk walked apart, at once
    (`fetch(where)`: their walk), and the batched walk without them (`batched(drop)`: the walks without the
    rowids `drop`), their outputs (`part` of a walk) merged in and written into the temp tables `outs`; False when
    they hold more rows than a batch (and APART_ROWS). Interleaved from `batched` goes to the caller (the
    shares then recreate the outputs)."""
    ids, n = gapped(con, rows)
    if not ids or n > max(rows, APART_ROWS):
        return False
    with sql.timed(f"scan {name} (sessions apart)"):
        w = fetch(among(ids))
        drop = w.cols["rid_storage"]
        apart = part(w)
    walks = ((int(w.cols["rid_storage"][-1]) if w.n else -1, part(w)) for w in batched(drop))
    write_all(con, outs, merged(walks, apart))
    return True


def gapped(con: duckdb.DuckDBPyConnection, rows: int) -> tuple[list[str], int]:
    """The sessions of `events` whose rowid ranges of `rows` rows (rowid // rows) have a gap, and their rows."""
    with sql.timed("scan apart: gapped sessions"):
        found = sql.query(con, "replay/scan_gapped", {"rows": rows}).fetchall()
    return [r[0] for r in found], sum(int(r[1]) for r in found)


def tail(con: duckdb.DuckDBPyConnection, lo: int) -> pa.Array:
    """The session ids of the rows of `events` from rowid `lo` on (a batched scan's last range; `scan_batches.batches`
    raises Interleaved as soon as it walks one of them before reading that range)."""
    with sql.timed("scan apart: the last range's sessions"):
        con.complete()  # (a DB-API result left half read would block the relation)
        return sql.relation(con, "replay/scan_tail", {"lo": lo}).to_arrow_table().column(0).combine_chunks()


def among(ids: list[str]) -> str:
    """A filter on session_id for a fetch: one of `ids` (a literal list: DuckDB tests it in the scan, where a
    semi join with a registered table computed the whole projection first, 0.91 against 0.19 CPU s at 10M)."""
    return "session_id IN (" + ", ".join("'" + s.replace("'", "''") + "'" for s in ids) + ")"


def without(batch: pa.Table, drop: Int) -> pa.Table:
    """`batch` without the rows whose rid is in `drop` (ascending)."""
    if not len(drop) or not batch.num_rows:
        return batch
    rid = arrow.to_numpy(batch.column("rid"), np.int64)
    lo, hi = int(rid.min()), int(rid.max())
    inside = drop[np.searchsorted(drop, lo, side="left") : np.searchsorted(drop, hi, side="right")]
    if not len(inside):
        return batch
    return batch.filter(arrow.from_numpy(~np.isin(rid, inside)))


def merged(
    walks: Iterator[tuple[int, tuple[pa.Table, ...]]], apart: tuple[pa.Table, ...]
) -> Iterator[tuple[pa.Table, ...]]:
    """The parts of `walks` (each: the walk's largest rowid, its output tables; rising rowid ranges) with the
    rows of `apart` (the same outputs of the sessions walked apart) merged in: in a table with a column rid,
    apart's rows up to a walk's largest rowid go into its part in rowid order; the rest, and the tables
    without rid whole, come as one last part."""
    keyed = ["rid" in t.column_names for t in apart]
    rids = [arrow.to_numpy(t.column("rid"), np.int64) if k else None for t, k in zip(apart, keyed, strict=True)]
    at = [0] * len(apart)
    for last, tables in walks:
        out = []
        for i, t in enumerate(tables):
            r = rids[i]
            if r is None:
                out.append(t)
                continue
            j = max(int(np.searchsorted(r, last, side="right")), at[i])
            out.append(_merge(t, apart[i].slice(at[i], j - at[i]), r[at[i] : j]))
            at[i] = j
        yield tuple(out)
    yield tuple(t.slice(at[i]) if keyed[i] else t for i, t in enumerate(apart))


def _merge(part: pa.Table, extra: pa.Table, xr: Int) -> pa.Table:
    """Two tables in ascending rid order (no rid in both) as one in rid order; xr: extra's rids."""
    if not extra.num_rows:
        return part
    if not part.num_rows:
        return extra
    if extra.schema != part.schema:
        extra = extra.cast(part.schema)
    pr = arrow.to_numpy(part.column("rid"), np.int64)
    ins = np.searchsorted(pr, xr)  # where each extra row goes among the part's
    cuts = np.flatnonzero(np.diff(ins)) + 1  # extra's runs that go in at one place
    if len(cuts) < SLICES:
        pieces: list[pa.Table] = []
        prev = 0
        for a, b in zip(np.concatenate(([0], cuts)), np.append(cuts, len(xr)), strict=True):
            k = int(ins[a])
            pieces += [part.slice(prev, k - prev), extra.slice(int(a), int(b - a))]
            prev = k
        pieces.append(part.slice(prev))
        return pa.concat_tables(pieces)
    n = len(pr) + len(xr)
    idx = np.empty(n, dtype=np.int64)
    is_x = np.zeros(n, dtype=np.bool_)
    is_x[ins + np.arange(len(xr))] = True
    idx[is_x] = len(pr) + np.arange(len(xr))
    idx[~is_x] = np.arange(len(pr))
    return pa.concat_tables([part, extra]).take(arrow.from_numpy(idx))
