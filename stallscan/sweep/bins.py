"""The sweep's per-session bin counts, kept in the database (table `sweep_bins`) and derived once.

A cell is (session, source_format, the session's model, gap bin against the report's threshold grid, the
router's and each rule variant's decision flags) with n = how many events share it: everything the sweep,
its bootstrap and the rule-variant comparison read (stallscan.sweep.core.sweep_from_cells,
stallscan.sweep.variants.compare_variants). The table is stamped like the replay's tables
(stallscan.replay.derive): it is read as it is while turn_boundaries' stamp, the grid and the rules are the
same and no event changed; after an ingest only the changed sessions' cells are binned again and replaced.
A sweep over another grid, or on a connection without the events change counter, bins the rows directly.
"""

from __future__ import annotations

from typing import Any

import duckdb
import numpy as np

from stallscan.replay import registry
from stallscan.store import sql, stamps
from stallscan.sweep import boot
from stallscan.sweep.cells import sweep_cells, thresholds_grid

TABLE = "sweep_bins"
GRID = (0.0, 30.0, 0.05)  # the report's grid (stallscan.report.sections.threshold)
_IDS = ("session_id", "source_format", "model")  # sweep_bins_input.sql's strings the cells keep as they are


def _grid() -> np.ndarray:
    return thresholds_grid(*GRID)


def usable(con: duckdb.DuckDBPyConnection, t: np.ndarray) -> bool:
    """The stored cells can serve a sweep over `t`: the report's grid, in a stallscan database."""
    return len(t) == len(_grid()) and bool(np.array_equal(t, _grid())) and stamps.events_version(con) is not None


def refresh(con: duckdb.DuckDBPyConnection) -> str | None:
    """Bring turn_boundaries (with its own options), then sweep_bins, up to date with the events; returns
    the derive mode, or None when turn_boundaries has no current stamp (the cells could not be trusted)."""
    from stallscan.replay import derive

    registry.refresh(con, "turn_boundaries")
    bounds, ev, _ = stamps.with_state(con, "turn_boundaries")
    if bounds is None or bounds["events_version"] != ev:
        return None
    inputs = {"grid": list(GRID), "boundaries": bounds["key"]}
    return derive.run(con, ENTRY.name, inputs, _compute, ENTRY.outputs, upstream=ENTRY.upstream, merge=boot.merge)


def _compute(con: duckdb.DuckDBPyConnection) -> None:
    from stallscan.store import arrow

    if stamps.one(con, "SELECT current_schema()") == "main":  # a full build: the stored sums go with the cells
        boot.drop(con)
    sql.run(con, "sweep/sweep_picks")
    sql.run(con, "sweep/sweep_rows")  # (the table macro sweep_rows(), read by sweep_bins_input.sql)
    # (through Arrow: the three id columns go back to DuckDB as the Arrow strings they came as, never one
    # Python object per row; the decision steps become one object per distinct value, arrow.objects)
    got = sql.relation(con, "sweep/sweep_bins_input").to_arrow_table()
    ids = {k: got.column(k) for k in _IDS}  # (NULL model: NULL)
    rows = arrow.numpy_columns(got.drop_columns(list(_IDS)))
    rows["sess"] = np.zeros(got.num_rows, np.int32)  # (the cells keep session_id itself: no index over it)
    cells = sweep_cells(rows, _grid())
    keep = {k: v for k, v in cells.items() if k not in ("grp", "sess", "n")}
    table = arrow.table({**ids, **{k: arrow.from_numpy(np.asarray(v)) for k, v in keep.items()}})
    con.register("sweep_bins_rows", table)
    try:
        sql.run(con, "sweep/sweep_bins_cells")
    finally:
        con.unregister("sweep_bins_rows")


def load_cells(con: duckdb.DuckDBPyConnection, by: str, fresh: bool = False) -> dict[str, np.ndarray] | None:
    """The cells of the sessions in scope_sessions, as sweep_from_cells takes them (None: see refresh;
    fresh: refresh ran already)."""
    if not fresh and refresh(con) is None:
        return None
    out: dict[str, Any] = sql.query(con, "sweep/sweep_bins_scoped", {"by": by}).fetchnumpy()
    return {k: np.asarray(v) for k, v in out.items()}


def load_totals(con: duckdb.DuckDBPyConnection) -> tuple[dict[str, np.ndarray], int, bool]:
    """The cells of every session of sweep_bins summed over the sessions (one cell per bin and set of
    flags, grp 'all', no session index: the sweep's curves, recommendations and variant comparison read the
    same sums from them), how many sessions they hold, and whether scope_sessions holds every one of them."""
    out: dict[str, Any] = sql.query(con, "sweep/sweep_bins_totals").fetchnumpy()
    n_sess, n_scoped = (int(out.pop(k)[0]) for k in ("n_sess", "n_scoped"))
    cells = _without_nulls(out, "n")  # (no cells at all: the one row of the session counts)
    cells = {k: v if k in ("bin", "n") else v.astype(bool) for k, v in cells.items()}
    cells["grp"] = np.full(len(cells["n"]), "all", dtype=object)
    cells["sess"] = np.zeros(len(cells["n"]), np.int32)  # (one index: its parts are the whole corpus's)
    return cells, n_sess, n_scoped == n_sess


def _without_nulls(cols: dict[str, Any], key: str) -> dict[str, np.ndarray]:
    """The rows where column `key` is not NULL. DuckDB's fetchnumpy hands back a masked array for a column holding
    a NULL and a plain one otherwise: a plain column's rows are kept without numpy.ma (numpy 2 imports it lazily,
    some 18 ms, on the first `np.ma` reference)."""
    if not hasattr(cols[key], "mask"):
        return {k: np.asarray(v) for k, v in cols.items()}
    nulls = np.ma.getmaskarray(cols[key])
    return {k: np.asarray(np.ma.getdata(v))[~nulls] for k, v in cols.items()}


ENTRY = registry.register(
    registry.Derived(
        TABLE,
        (TABLE,),
        ("turn_boundaries_narrow", "turn_boundary_variants_marked"),  # (what sweep_rows.sql reads)
        lambda con, _: refresh(con),
        export=False,
    )
)


def writable(con: duckdb.DuckDBPyConnection) -> bool:
    return not stamps.one(con, "SELECT readonly FROM duckdb_databases() WHERE database_name = current_database()")
