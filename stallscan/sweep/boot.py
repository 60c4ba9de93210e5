"""The bootstrap's per-resample sums of the stored sweep cells, kept in table `sweep_boot`.

The report's sweep (every session, no grouping) resamples the sessions of sweep_bins (stallscan.sweep.bins)
with per-session Poisson weights (stallscan.sweep.bootstrap), so a resample's sums are sums of
per-session parts. They are stored for one (n_boot, seed) at a time (the last a whole-corpus sweep asked
for: the report's 1,000 and 0, unless `stallscan sweep --seed` or `--bootstrap` asked for others since),
per policy and gap bin, and kept equal to the sums over every session of sweep_bins:

* an incremental sweep_bins refresh (stallscan.replay.derive, `merge`) subtracts the replaced sessions'
  old cells' part and adds their new cells' part, in the transaction that replaces the cells;
* a full sweep_bins build drops the table (the next report computes the sums from the cells and stores
  them, `store`).

So the report after one new session adds that session's part (its few bins x n_boot) instead of
re-weighting every session in every resample; the intervals then come from the sums (a cumulative sum and
a minimum per resample). The sums are integers, so the stored and a fresh computation are equal exactly.
"""

from __future__ import annotations

from typing import Any

import duckdb
import numpy as np

from stallscan.store import sql
from stallscan.sweep.bootstrap import Sums, sums
from stallscan.sweep.cells import policy_parts

TABLE = "sweep_boot"


def load(con: duckdb.DuckDBPyConnection, n_boot: int, seed: int, nb: int) -> dict[str, Sums]:
    """The stored sums for (n_boot, seed) over `nb` gap bins, by policy (empty when none are stored). A
    policy's set is whole when its row of fixed counts (bin = nb) is stored; a bin without a row sums to 0."""
    if not sql.has_table(con, TABLE):
        return {}
    policies, bins_at, h, o = _get(con, n_boot, seed, nb, None)
    out: dict[str, Sums] = {}
    for p in dict.fromkeys(policies.tolist()):
        sel = np.flatnonzero(policies == p)
        at = bins_at[sel]
        if at[-1] != nb:
            continue  # no fixed counts: not a whole set (never written so), computed afresh
        if len(sel) == nb + 1:  # every bin, in order: views of the fetched columns
            lo = int(sel[0])
            hp, op = h[:, lo : lo + nb + 1], o[:, lo : lo + nb + 1]
        else:  # the bins stored (the others sum to 0)
            hp, op = np.zeros((n_boot, nb + 1), np.int64), np.zeros((n_boot, nb + 1), np.int64)
            hp[:, at], op[:, at] = h[:, sel], o[:, sel]
        out[p] = _shared(Sums(hp[:, :nb], op[:, :nb], np.stack([hp[:, nb], op[:, nb]], axis=1)), out)
    return out


def _shared(s: Sums, known: dict[str, Sums]) -> Sums:
    """`s`, or an equal set of sums already loaded: policies with the very same sums (a rule variant that
    decides every event as the router does) then share one object, so the sweep draws their picks once,
    as it does for sums it computes (stallscan.sweep.core._fill_sums)."""
    for k in known.values():
        if all(np.array_equal(getattr(k, f), getattr(s, f)) for f in ("f", "h", "o")):
            return k
    return s


def _get(
    con: duckdb.DuckDBPyConnection, n_boot: int, seed: int, nb: int, only: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Stored rows in (policy, bin) order: policies, bins, and h, o as (n_boot, rows) int64 columns."""
    params = {"n_boot": n_boot, "seed": seed, "bins": nb, "only_bins": None if only is None else only.tolist()}
    rows = sql.query(con, "sweep/sweep_boot_get", params).fetchnumpy()
    h, o = (_columns(rows[k], n_boot) for k in ("h", "o"))
    return np.asarray(rows["policy"]), np.asarray(rows["bin"]), h, o


def _columns(blobs: Any, n_boot: int) -> np.ndarray:
    """(n_boot, rows): each blob (n_boot int64) a column."""
    return np.frombuffer(b"".join(np.asarray(blobs).tolist()), dtype="<i8").reshape(-1, n_boot).T


def _put(
    con: duckdb.DuckDBPyConnection,
    key: tuple[int, int, int],
    rows: tuple[list[str], np.ndarray, np.ndarray, np.ndarray],
    only_these: bool,
) -> None:
    """Write rows (policies, bins, h and o as (n_boot, rows) columns) for key (n_boot, seed, bins). A row
    whose sums are all 0 is not stored (its bin reads as 0), save the fixed counts' (bin = bins), which
    marks the policy's set as stored; with only_these, such a row's earlier one is still replaced."""
    from stallscan.store import arrow

    (n_boot, seed, nb), (policies, at, h, o) = key, rows
    keep = (np.asarray(at) == nb) | (h != 0).any(0) | (o != 0).any(0)
    if not only_these:  # (nothing earlier to replace)
        policies, at, h, o = (
            [p for p, k in zip(policies, keep.tolist()) if k],
            np.asarray(at)[keep],
            h[:, keep],
            o[:, keep],
        )
        keep = keep[keep]
    n = len(policies)
    tbl = arrow.table(
        {
            "n_boot": arrow.from_numpy(np.full(n, n_boot, np.int32)),
            "seed": arrow.from_numpy(np.full(n, seed, np.int64)),
            "policy": arrow.strings(list(policies)),
            "bins": arrow.from_numpy(np.full(n, nb, np.int32)),
            "bin": arrow.from_numpy(np.asarray(at, np.int32)),
            "h": _blobs(h),
            "o": _blobs(o),
            "keep": arrow.from_numpy(keep),
        }
    )
    con.register("sweep_boot_rows", tbl)
    try:
        sql.run(con, "sweep/sweep_boot_put", {"only_these": only_these})
    finally:
        con.unregister("sweep_boot_rows")


def _blobs(cols: np.ndarray) -> Any:
    """Each column of (n_boot, rows) as one blob of n_boot little-endian int64, built on the transposed
    buffer itself (no bytes object per row: 0.4 s of the first report's 3,015 rows x 1,000 resamples)."""
    import pyarrow as pa

    data = np.ascontiguousarray(cols.T, dtype="<i8")  # row i: column i's n_boot sums
    n, width = data.shape
    offsets = np.arange(n + 1, dtype=np.int64) * (width * 8)
    return pa.Array.from_buffers(pa.large_binary(), n, [None, pa.py_buffer(offsets), pa.py_buffer(data)])


def store(con: duckdb.DuckDBPyConnection, n_boot: int, seed: int, by_policy: dict[str, Sums]) -> None:
    """Keep these sums (of every session of sweep_bins) as the stored ones: one (n_boot, seed) at a time."""
    if not by_policy:
        return
    nb = next(iter(by_policy.values())).h.shape[1]
    # each policy's bins with a sum first (as _put keeps them), then only those joined: the report's 5 policies
    # x 601 bins x 1,000 resamples joined whole were 48 MB copied and compared for the 3 % of bins it stores
    kept = {p: np.flatnonzero(s.h.any(0) | s.o.any(0)) for p, s in by_policy.items()}
    policies = [p for p, cols in kept.items() for _ in range(len(cols) + 1)]
    at = np.concatenate([np.append(cols, nb) for cols in kept.values()])
    h = np.concatenate([x for p, s in by_policy.items() for x in (s.h[:, kept[p]], s.f[:, :1])], axis=1)
    o = np.concatenate([x for p, s in by_policy.items() for x in (s.o[:, kept[p]], s.f[:, 1:])], axis=1)
    con.execute("BEGIN TRANSACTION")
    try:
        _put(con, (n_boot, seed, nb), (policies, at, h, o), only_these=False)
        con.execute("COMMIT")
    except BaseException:
        sql.rollback(con)
        raise


def drop(con: duckdb.DuckDBPyConnection) -> None:
    """Forget the stored sums (sweep_bins is being rebuilt)."""
    con.execute(f"DROP TABLE IF EXISTS main.{TABLE}")


def merge(con: duckdb.DuckDBPyConnection) -> None:
    """Inside the incremental sweep_bins refresh's transaction (stallscan.replay.derive), before the changed
    sessions' cells are replaced: move the stored sums from their old cells to their new ones, reading and
    rewriting only the bins (and the fixed counts) they change."""
    if not sql.has_table(con, TABLE):
        return
    stored = con.execute(f"SELECT DISTINCT n_boot, seed, bins, policy FROM {TABLE} ORDER BY ALL").fetchall()
    if not stored:
        return
    rows = sql.query(con, "sweep/sweep_boot_delta_cells").fetchnumpy()
    cells = {k: np.asarray(v) for k, v in rows.items()}
    sign = cells.pop("sign")
    used, cells["bin"] = np.unique(cells["bin"], return_inverse=True)  # the changed cells' bins only
    parts = {s: {k: v[sign == s] for k, v in cells.items()} for s in (-1, 1)}
    for key in dict.fromkeys((n, s, b) for n, s, b, _ in stored):
        n_boot, seed, nb = key
        at = np.append(used, nb)  # stored bin of each delta column (nb: the fixed counts)
        deltas = {}
        for policy in (p for n, s, b, p in stored if (n, s, b) == key):
            gone, added = (_part(parts[s], policy, len(used), n_boot, seed) for s in (-1, 1))
            deltas[policy] = (
                np.concatenate([added.h - gone.h, added.f[:, :1] - gone.f[:, :1]], axis=1),
                np.concatenate([added.o - gone.o, added.f[:, 1:] - gone.f[:, 1:]], axis=1),
            )
        touched = np.flatnonzero(np.any([(h != 0).any(0) | (o != 0).any(0) for h, o in deltas.values()], axis=0))
        if not len(touched):
            continue
        found, found_at, h0, o0 = _get(con, n_boot, seed, nb, at[touched])
        policies = [p for p in deltas for _ in touched]  # every policy's touched bins (a bin without a row: 0)
        row = {pb: i for i, pb in enumerate(zip(policies, at[touched].tolist() * len(deltas)))}
        idx = np.array([row[pb] for pb in zip(found.tolist(), found_at.tolist())], int)
        h, o = np.zeros((n_boot, len(policies)), np.int64), np.zeros((n_boot, len(policies)), np.int64)
        h[:, idx], o[:, idx] = h0, o0
        h += np.concatenate([deltas[p][0][:, touched] for p in deltas], axis=1)
        o += np.concatenate([deltas[p][1][:, touched] for p in deltas], axis=1)
        _put(con, key, (policies, np.tile(at[touched], len(deltas)), h, o), only_these=True)


def _part(c: dict[str, np.ndarray], policy: str, nb: int, n_boot: int, seed: int) -> Sums:
    parts, keys, _ = policy_parts(c, policy, nb)
    return sums(parts, keys, nb, n_boot, seed)
