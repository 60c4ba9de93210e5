"""What one Spark task runs on one group of whole sessions: the local replay, unchanged, over DuckDB.

`replay_group(table, params)` loads the group's Arrow table as `events` into a fresh in-memory DuckDB
(the canonical schema, so types are the local ones), runs `replay_tables` -- the same stallscan.replay
functions, in the same order, the local path runs -- and returns every derived table plus the sweep's
cells in one Arrow table (`UNION_SCHEMA`: a `_table` tag and one struct column per output table, the
others null), because a Spark grouped map returns one schema. The rules are never restated for Spark.

Nothing here imports pyspark: the function is plain pyarrow in, pyarrow out, and is tested as such.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import duckdb
import numpy as np
import pyarrow as pa

from stallscan.replay.boundaries import replay_boundaries
from stallscan.replay.boundaries_ref import GAP_THRESHOLD_S
from stallscan.replay.stall_rules import RETRY_BOUND
from stallscan.replay.stalls import replay_stalls
from stallscan.store.db import connect
from stallscan.store.errors import StallscanError
from stallscan.sweep.core import load_rows, sweep_cells

# the derived tables a replay writes, in the order they are written
TABLES = ("user_labels", "turn_boundaries", "rounds", "stalls", "turns")
# the sweep's cells with the session named (core.sweep_cells keys, session_id for sess, n)
CELLS = "sweep_cells"
CELL_SCHEMA = pa.schema(
    [
        ("grp", pa.string()),
        ("session_id", pa.string()),
        ("bin", pa.int64()),
        ("human", pa.bool_()),
        ("vgr_gap", pa.bool_()),
        ("decided_human", pa.bool_()),
        ("has_gap", pa.bool_()),
        ("first_in_session", pa.bool_()),
        ("by_fallback", pa.bool_()),
        ("n", pa.float64()),
    ]
)


@dataclass
class TaskParams:
    threshold: float = GAP_THRESHOLD_S
    retry_bound: int = RETRY_BOUND
    config: dict[str, Any] = field(default_factory=dict)  # load_config() result, resolved on the driver
    thresholds: list[float] = field(default_factory=list)  # sorted unique sweep grid; empty: no cells
    by: str = "none"
    duckdb_threads: int = 1  # one Spark task per core: DuckDB should not fan out under it
    duckdb_memory: str | None = None  # e.g. "2GB"; DuckDB spills to a temp dir past it


def replay_tables(con: duckdb.DuckDBPyConnection, threshold: float, retry_bound: int, config: Any = None) -> None:
    """The full replay over `events`: labels, boundaries at `threshold`, stalls at `retry_bound`.

    The Spark task and the local reference the tests compare it with both call this. replay_stalls
    labels the events first (with `config`); replay_boundaries then finds user_labels and keeps it, so
    the labels are built once (calling label_events first as well would build them twice)."""
    replay_stalls(con, retry_bound=retry_bound, config=config)
    replay_boundaries(con, threshold, summary=False)


def events_columns() -> list[str]:
    return [f.name for f in _schemas()["events"]]


def table_schemas() -> dict[str, pa.Schema]:
    """Arrow schema of each output table, read off a replay of an empty `events` (so it follows the SQL)."""
    return {t: _schemas()[t] for t in (*TABLES, CELLS)}


@lru_cache(maxsize=1)
def _schemas() -> dict[str, pa.Schema]:
    con = connect(":memory:")
    try:
        replay_tables(con, GAP_THRESHOLD_S, RETRY_BOUND, {})
        out = {t: _arrow(con, f"SELECT * FROM {t} LIMIT 0").schema for t in ("events", *TABLES)}
    finally:
        con.close()
    out[CELLS] = CELL_SCHEMA
    return out


def union_schema() -> pa.Schema:
    """`_table` (which output a row belongs to) + one nullable struct column per output table."""
    return pa.schema(
        [pa.field("_table", pa.string())] + [pa.field(t, pa.struct(list(s))) for t, s in table_schemas().items()]
    )


def replay_group(table: pa.Table, params: TaskParams) -> pa.Table:
    """Replay one group (whole sessions; any columns beyond the events schema are ignored)."""
    con = connect(":memory:")
    try:
        con.execute(f"SET threads = {int(params.duckdb_threads)}")
        con.execute("SET temp_directory = $d", {"d": os.path.join(tempfile.gettempdir(), "stallscan-spark-spill")})
        if params.duckdb_memory:
            con.execute("SET memory_limit = $m", {"m": params.duckdb_memory})
        cols = [c for c in events_columns() if c in table.column_names]
        missing = sorted(set(events_columns()) - set(cols))
        if missing:
            raise StallscanError(
                f"events input lacks column(s): {', '.join(missing)}",
                hint="write the input with `stallscan export --tables events` (hand-off layout)",
            )
        _group = table.select(cols)
        con.execute("INSERT INTO events BY NAME SELECT * FROM _group")
        del _group
        replay_tables(con, params.threshold, params.retry_bound, params.config)
        parts = {t: _arrow(con, f"SELECT * FROM {t}").cast(s) for t, s in table_schemas().items() if t != CELLS}
        if params.thresholds:
            parts[CELLS] = _cells(con, params)
        return to_union(parts)
    finally:
        con.close()


def _cells(con: duckdb.DuckDBPyConnection, params: TaskParams) -> pa.Table:
    rows = load_rows(con, params.by, variants=False)  # the local sweep's rows (sweep_input.sql), this group's sessions
    c = sweep_cells(rows, np.asarray(params.thresholds, dtype=float))
    data = {k: c[k] for k in CELL_SCHEMA.names if k != "session_id"}
    data["session_id"] = rows["session_id"]
    return pa.table({k: pa.array(np.asarray(data[k]).tolist(), CELL_SCHEMA.field(k).type) for k in CELL_SCHEMA.names})


def to_union(parts: dict[str, pa.Table]) -> pa.Table:
    schema = union_schema()
    pieces = []
    for name, tbl in parts.items():
        n = tbl.num_rows
        cols: list[pa.Array] = [pa.array([name] * n, pa.string())]
        for f in schema:
            if f.name == "_table":
                continue
            if f.name == name:
                cols.append(pa.StructArray.from_arrays([c.combine_chunks() for c in tbl.columns], fields=list(f.type)))
            else:
                cols.append(pa.nulls(n, f.type))
        pieces.append(pa.Table.from_arrays(cols, schema=schema))
    return pa.concat_tables(pieces) if pieces else schema.empty_table()


def _arrow(con: duckdb.DuckDBPyConnection, query: str) -> pa.Table:
    rel = con.sql(query)
    return rel.to_arrow_table() if hasattr(rel, "to_arrow_table") else rel.fetch_arrow_table()
