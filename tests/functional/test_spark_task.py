"""The per-group task without Spark: groups of whole sessions give the local rows, and aggregated sweep
cells finish in the same recommendation and interval as the local sweep (here with --by source_format)."""

from __future__ import annotations

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from stallscan.spark import task
from stallscan.spark.job import sweep_from_arrow
from stallscan.sweep.core import POLICIES, run_sweep, thresholds_grid
from tests.helpers import memory_copy


def _tables(union: pa.Table, name: str) -> pa.Table:
    part = union.filter(pc.equal(union["_table"], name)).column(name).combine_chunks()
    return pa.Table.from_struct_array(part)


def test_groups_of_whole_sessions_equal_the_whole_replay_and_cells_finish_the_same_sweep(sample_ingested_file):
    con = memory_copy(sample_ingested_file)  # sample_logs ingested
    events = con.sql("SELECT * FROM events").to_arrow_table()
    grid = np.unique(thresholds_grid())
    params = task.TaskParams(thresholds=grid.tolist(), by="source_format")
    sessions = sorted(set(events["session_id"].to_pylist()))
    groups = [sessions[i::3] for i in range(3)]  # three groups of whole sessions
    outs = [task.replay_group(events.filter(pc.is_in(events["session_id"], pa.array(g))), params) for g in groups]
    union = pa.concat_tables(outs)
    assert union.schema == task.union_schema()

    task.replay_tables(con, 2.0, 3, {})
    for t in task.TABLES:
        got = _tables(union, t)
        con.register("_got", got)
        diff = con.execute(f"SELECT count(*) FROM (FROM {t} EXCEPT ALL FROM _got)").fetchall()[0][0]
        extra = con.execute(f"SELECT count(*) FROM (FROM _got EXCEPT ALL FROM {t})").fetchall()[0][0]
        con.unregister("_got")
        assert (diff, extra, got.num_rows) == (0, 0, con.execute(f"SELECT count(*) FROM {t}").fetchall()[0][0]), t

    cells = _tables(union, task.CELLS)
    keys = [c for c in task.CELL_SCHEMA.names if c != "n"]
    agg = duckdb.connect().sql(f"SELECT {', '.join(keys)}, sum(n) AS n FROM cells GROUP BY ALL").to_arrow_table()
    assert agg.num_rows < cells.num_rows  # the aggregate really merges rows
    spark_like = sweep_from_arrow(agg, grid, 1.0, 3.0, "source_format", POLICIES, 100, 7)
    local = run_sweep(con, grid, 1.0, 3.0, by="source_format", bootstrap=100, seed=7)
    assert spark_like.recommendation == local.recommendation
    assert len(local.recommendation) > 3
    con.close()
