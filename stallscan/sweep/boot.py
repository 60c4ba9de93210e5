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


def load(con: duckdb.DuckDBPyConnection, n_boot: int, seed: int, nb: int) -> dict[str, Sums]:
    """The stored sums for (n_boot, seed) over `nb` gap bins, by policy (empty when none are stored)."""
    if not sql.has_table(con, TABLE):
        return {}
    rows = con.execute(
        f"SELECT policy, h, o, f FROM {TABLE} WHERE n_boot = ? AND seed = ? AND bins = ?", [n_boot, seed, nb]
    ).fetchall()
    return {p: _sums(h, o, f, n_boot) for p, h, o, f in rows}


def _sums(h: bytes, o: bytes, f: bytes, n_boot: int) -> Sums:
    def arr(b: bytes) -> np.ndarray:
        return np.frombuffer(b, dtype="<i8").reshape(n_boot, -1).astype(np.int64)

    return Sums(arr(h), arr(o), arr(f))


def store(con: duckdb.DuckDBPyConnection, n_boot: int, seed: int, by_policy: dict[str, Sums]) -> None:
    """Keep these sums (of every session of sweep_bins) as the stored ones: one (n_boot, seed) at a time."""
    rows = [_row(n_boot, seed, p, s) for p, s in by_policy.items()]
    con.execute("BEGIN TRANSACTION")
    try:
        sql.run(con, "sweep/sweep_boot_create")
        con.execute(f"DELETE FROM {TABLE}")
        con.executemany(f"INSERT INTO {TABLE} VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
        con.execute("COMMIT")
    except BaseException:
        sql.rollback(con)
        raise


def _row(n_boot: int, seed: int, policy: str, s: Sums) -> list[Any]:
    return [n_boot, seed, policy, s.h.shape[1], *(x.astype("<i8").tobytes() for x in (s.h, s.o, s.f))]


def drop(con: duckdb.DuckDBPyConnection) -> None:
    """Forget the stored sums (sweep_bins is being rebuilt)."""
    con.execute(f"DROP TABLE IF EXISTS main.{TABLE}")


def merge(con: duckdb.DuckDBPyConnection) -> None:
    """Inside the incremental sweep_bins refresh's transaction (stallscan.replay.derive), before the changed
    sessions' cells are replaced: move the stored sums from their old cells to their new ones."""
    if not sql.has_table(con, TABLE):
        return
    stored = con.execute(f"SELECT DISTINCT n_boot, seed, bins FROM {TABLE}").fetchall()
    if not stored:
        return
    rows = sql.query(con, "sweep/sweep_boot_delta_cells").fetchnumpy()
    cells = {k: np.asarray(v) for k, v in rows.items()}
    sign = cells.pop("sign")
    parts = {s: {k: v[sign == s] for k, v in cells.items()} for s in (-1, 1)}
    for n_boot, seed, nb in stored:
        old = load(con, n_boot, seed, nb)
        new = {}
        for policy, total in old.items():
            gone, added = (_part(parts[s], policy, nb, n_boot, seed) for s in (-1, 1))
            new[policy] = total - gone + added
        con.execute(f"DELETE FROM {TABLE} WHERE n_boot = ? AND seed = ? AND bins = ?", [n_boot, seed, nb])
        con.executemany(
            f"INSERT INTO {TABLE} VALUES (?, ?, ?, ?, ?, ?, ?)", [_row(n_boot, seed, p, s) for p, s in new.items()]
        )


def _part(c: dict[str, np.ndarray], policy: str, nb: int, n_boot: int, seed: int) -> Sums:
    parts, keys, _ = policy_parts(c, policy, nb)
    return sums(parts, keys, nb, n_boot, seed)
