"""The bootstrap's per-resample sums of the stored sweep cells, kept in table `sweep_boot`.

The report's sweep (every session, no grouping) resamples the sessions of sweep_bins (stallscan.sweep.bins)
with per-session Poisson weights (stallscan.sweep.bootstrap), so a resample's sums are sums of
per-session parts. They are stored once per (n_boot, seed) and policy, and kept equal to the sums over
every session of sweep_bins:

* an incremental sweep_bins refresh (stallscan.replay.derive, `merge`) subtracts the replaced sessions'
  old cells' part and adds their new cells' part, in the transaction that replaces the cells;
* a full sweep_bins build drops the table (the next report computes the sums from the cells and stores
  them, `store`).

So the report after one new session adds that session's part (a few pairs x n_boot) instead of
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


def load(
    con: duckdb.DuckDBPyConnection, n_boot: int, seed: int, nb: int, only: np.ndarray | None = None
) -> dict[str, Sums]:
    """The stored sums for (n_boot, seed) over `nb` gap bins, by policy (empty when none are stored). With
    `only` (bin numbers, nb = the fixed counts), the other bins' columns are left zero."""
    if not sql.has_table(con, TABLE):
        return {}
    params = {"n_boot": n_boot, "seed": seed, "bins": nb, "only_bins": None if only is None else only.tolist()}
    rows = sql.query(con, "sweep/sweep_boot_get", params).fetchnumpy()
    out = {}
    policies = np.asarray(rows["policy"])
    for p in dict.fromkeys(policies.tolist()):
        sel = np.flatnonzero(policies == p)
        at = np.asarray(rows["bin"])[sel]
        if only is None and len(at) != nb + 1:
            continue  # not a whole set (never written so): computed afresh
        h, o = (_columns(np.asarray(rows[k])[sel], n_boot) for k in ("h", "o"))
        s = Sums(np.zeros((n_boot, nb), np.int64), np.zeros((n_boot, nb), np.int64), np.zeros((n_boot, 2), np.int64))
        grid = at < nb
        s.h[:, at[grid]], s.o[:, at[grid]] = h[:, grid], o[:, grid]
        if not grid.all():
            s.f[:, 0], s.f[:, 1] = h[:, ~grid][:, 0], o[:, ~grid][:, 0]
        out[p] = s
    return out


def _columns(blobs: np.ndarray, n_boot: int) -> np.ndarray:
    """(n_boot, len(blobs)): each blob one column of n_boot int64."""
    return np.frombuffer(b"".join(blobs.tolist()), dtype="<i8").reshape(len(blobs), n_boot).T.astype(np.int64)


def _put(
    con: duckdb.DuckDBPyConnection,
    n_boot: int,
    seed: int,
    by_policy: dict[str, tuple[Sums, np.ndarray]],
    only_these: bool,
) -> None:
    """Write the columns `bins` (nb = the fixed counts) of each policy's sums."""
    import pyarrow as pa

    cols: dict[str, list[Any]] = {k: [] for k in ("policy", "bin", "h", "o")}
    nb = 0
    for p, (s, at) in by_policy.items():
        nb = s.h.shape[1]
        h = np.concatenate([s.h, s.f[:, :1]], axis=1)[:, at].T.astype("<i8")
        o = np.concatenate([s.o, s.f[:, 1:]], axis=1)[:, at].T.astype("<i8")
        cols["policy"] += [p] * len(at)
        cols["bin"] += at.tolist()
        cols["h"] += [r.tobytes() for r in h]
        cols["o"] += [r.tobytes() for r in o]
    n = len(cols["bin"])
    tbl = pa.table(
        {
            "n_boot": pa.array([n_boot] * n, pa.int32()),
            "seed": pa.array([seed] * n, pa.int64()),
            "policy": pa.array(cols["policy"], pa.string()),
            "bins": pa.array([nb] * n, pa.int32()),
            "bin": pa.array(cols["bin"], pa.int32()),
            "h": pa.array(cols["h"], pa.binary()),
            "o": pa.array(cols["o"], pa.binary()),
        }
    )
    con.register("sweep_boot_rows", tbl)
    try:
        sql.run(con, "sweep/sweep_boot_put", {"only_these": only_these})
    finally:
        con.unregister("sweep_boot_rows")


def store(con: duckdb.DuckDBPyConnection, n_boot: int, seed: int, by_policy: dict[str, Sums]) -> None:
    """Keep these sums (of every session of sweep_bins) as the stored ones: one (n_boot, seed) at a time."""
    con.execute("BEGIN TRANSACTION")
    try:
        every = {p: (s, np.arange(s.h.shape[1] + 1)) for p, s in by_policy.items()}
        _put(con, n_boot, seed, every, only_these=False)
        con.execute("COMMIT")
    except BaseException:
        sql.rollback(con)
        raise


def drop(con: duckdb.DuckDBPyConnection) -> None:
    """Forget the stored sums (sweep_bins is being rebuilt)."""
    con.execute(f"DROP TABLE IF EXISTS main.{TABLE}")


def merge(con: duckdb.DuckDBPyConnection) -> None:
    """Inside the incremental sweep_bins refresh's transaction (stallscan.replay.derive), before the changed
    sessions' cells are replaced: move the stored sums from their old cells to their new ones, rewriting
    only the bins (and the fixed counts) they change."""
    if not sql.has_table(con, TABLE):
        return
    stored = con.execute(f"SELECT DISTINCT n_boot, seed, bins, policy FROM {TABLE}").fetchall()
    if not stored:
        return
    rows = sql.query(con, "sweep/sweep_boot_delta_cells").fetchnumpy()
    cells = {k: np.asarray(v) for k, v in rows.items()}
    sign = cells.pop("sign")
    parts = {s: {k: v[sign == s] for k, v in cells.items()} for s in (-1, 1)}
    for n_boot, seed, nb in dict.fromkeys((n, s, b) for n, s, b, _ in stored):
        changed: dict[str, tuple[Sums, np.ndarray]] = {}
        for policy in (p for n, s, b, p in stored if (n, s, b) == (n_boot, seed, nb)):
            gone, added = (_part(parts[s], policy, nb, n_boot, seed) for s in (-1, 1))
            delta = added - gone
            at = np.flatnonzero(np.concatenate([(delta.h != 0).any(0) | (delta.o != 0).any(0), [(delta.f != 0).any()]]))
            if len(at):
                changed[policy] = (delta, at)
        if not changed:
            continue
        every = np.unique(np.concatenate([at for _, at in changed.values()]))
        old = load(con, n_boot, seed, nb, only=every)
        _put(con, n_boot, seed, {p: (old[p] + d, at) for p, (d, at) in changed.items()}, only_these=True)


def _part(c: dict[str, np.ndarray], policy: str, nb: int, n_boot: int, seed: int) -> Sums:
    parts, keys, _ = policy_parts(c, policy, nb)
    return sums(parts, keys, nb, n_boot, seed)
