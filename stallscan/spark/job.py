"""The Spark driver: read events parquet, replay groups of whole sessions in tasks, write the tables.

    spark_replay(spark, "s3a://bucket/export/events", "s3a://bucket/replay", threshold=2.0, retry_bound=3)

1. read the events (any path Spark reads; hive partitions such as session_bucket=K are fine);
2. one aggregate over session_id gives events, sessions and the largest session, which must fit one task
   (`max_session_events`, else a clear error before any task starts);
3. `groupBy(pmod(xxhash64(session_id), G)).applyInArrow(replay_group)`: every group holds whole sessions
   (the key is a function of the session), G = ceil(events / group_events). The replay rules are
   session-local, so a group of many sessions gives the rows each session alone would; grouping by
   bucket instead of by session pays DuckDB's ~0.3 s set-up once per group rather than per session
   (`group_events=0` groups by session_id itself);
4. the tasks' union output is persisted and split into user_labels, turn_boundaries, rounds, stalls,
   turns (parquet) and the sweep cells, which Spark sums per (group, session, gap bin, flags);
5. the driver collects the cells and finishes with stallscan.sweep.core.sweep_from_cells, the code the
   local `stallscan sweep` ends in, and writes `_stallscan.json` (the run's manifest) beside the tables.

pyspark is imported inside the functions here, so `import stallscan.spark.job` works without it.
"""

from __future__ import annotations

import json
import math
import os
import sys
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from stallscan.export import LAYOUT_VERSION  # the hand-off layout (docs/spark.md)
from stallscan.replay.boundaries_ref import GAP_THRESHOLD_S
from stallscan.replay.labels import load_config
from stallscan.replay.stall_rules import RETRY_BOUND
from stallscan.spark import task
from stallscan.store.errors import InputError, StallscanError
from stallscan.store.version import SCHEMA_VERSION, __version__
from stallscan.sweep.core import POLICIES, SweepResult, sweep_from_cells, thresholds_grid

if TYPE_CHECKING:  # pyspark is optional: imported for real inside the functions
    from pyspark.sql import SparkSession

MANIFEST = "_stallscan.json"
SPARK_DEFAULTS = {
    "spark.sql.session.timeZone": "UTC",  # Arrow timestamps reach DuckDB as UTC
    "spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS",  # not INT96: DuckDB/polars read it as is
}


@dataclass
class SparkReplayResult:
    output: str
    events: int
    sessions: int
    groups: int
    largest_session: dict[str, Any]
    tables: dict[str, int]
    sweep: SweepResult | None = None
    seconds: float = 0.0
    manifest: dict[str, Any] = field(default_factory=dict)


def require_pyspark() -> Any:
    try:
        import pyspark
    except ImportError:
        raise StallscanError(
            "pyspark is not installed", hint="pip install 'stallscan[spark]' (PySpark >= 4 and a Java 17+ runtime)"
        )
    if int(pyspark.__version__.split(".")[0]) < 4:
        raise StallscanError(
            f"pyspark {pyspark.__version__} is too old: applyInArrow needs PySpark >= 4",
            hint="pip install 'stallscan[spark]'",
        )
    return pyspark


def spark_session(master: str | None = None, conf: dict[str, str] | None = None) -> SparkSession:
    """A SparkSession with stallscan's settings (UTC, micro-second parquet timestamps); master None keeps
    whatever spark-submit set."""
    require_pyspark()
    from pyspark.sql import SparkSession

    if (master or "").startswith("local") and not os.environ.get("PYSPARK_PYTHON"):
        os.environ["PYSPARK_PYTHON"] = sys.executable  # local workers run this interpreter (its duckdb, stallscan)
    b = SparkSession.builder.appName("stallscan")
    if master:
        b = b.master(master)
    for k, v in {**SPARK_DEFAULTS, "spark.ui.showConsoleProgress": "false", **(conf or {})}.items():
        b = b.config(k, v)
    spark = b.getOrCreate()
    for k, v in SPARK_DEFAULTS.items():  # a session made before us (spark-submit, notebooks) gets them too
        spark.conf.set(k, v)
    return spark


def spark_replay(
    spark: SparkSession,
    input_path: str,
    output: str,
    threshold: float = GAP_THRESHOLD_S,
    retry_bound: int = RETRY_BOUND,
    config: Any = None,
    group_events: int = 200_000,
    max_session_events: int = 2_000_000,
    thresholds: np.ndarray | None = None,
    by: str = "none",
    bootstrap: int = 1000,
    seed: int = 0,
    cost_auto_as_human: float = 1.0,
    cost_human_as_auto: float = 1.0,
    duckdb_memory: str | None = None,
    partitions: int = 0,
) -> SparkReplayResult:
    """Replay the events at `input_path` on Spark and write the derived tables under `output`."""
    from pyspark import StorageLevel
    from pyspark.sql import functions as F
    from pyspark.sql.pandas.types import from_arrow_schema

    t0 = time.perf_counter()
    _lap.t = t0  # type: ignore[attr-defined]
    if threshold is None or not threshold >= 0:
        raise StallscanError(f"threshold must be >= 0 s, not {threshold!r}", hint="e.g. --threshold 2.0")
    if retry_bound < 0:
        raise StallscanError(f"retry bound must be >= 0, not {retry_bound}", hint="e.g. --retry-bound 3")
    cfg = load_config(config)  # read on the driver: executors never look for a config file
    grid = np.unique(np.asarray(thresholds if thresholds is not None else thresholds_grid(), dtype=float))
    for k, v in SPARK_DEFAULTS.items():
        spark.conf.set(k, v)
    try:
        df = spark.read.parquet(input_path)
    except Exception as exc:  # AnalysisException: path missing, not parquet
        raise InputError(
            f"cannot read events parquet at {input_path}: {str(exc).strip().splitlines()[0]}",
            hint="point at the events/ folder `stallscan export --tables events` wrote",
        )
    cols = task.events_columns()
    missing = [c for c in cols if c not in df.columns]
    if missing:
        raise InputError(
            f"{input_path} is not a stallscan events table: missing {', '.join(missing)}",
            hint="write it with `stallscan export --tables events` (layout v1)",
        )
    df = df.select(*cols)
    # shuffle partitions: Spark's default of 200 costs minutes of empty tasks on small inputs; the size
    # aggregate gets one per core (or input file), the replay one per group, so each task replays one group
    par = spark.sparkContext.defaultParallelism
    spark.conf.set("spark.sql.shuffle.partitions", str(max(par, min(200, len(df.inputFiles())))))

    sizes = (
        df.groupBy("session_id")
        .count()
        .agg(
            F.count("*").alias("sessions"),
            F.sum("count").alias("events"),
            F.max_by("session_id", "count").alias("largest"),
            F.max("count").alias("largest_n"),
        )
        .collect()[0]
    )
    n_events, n_sessions = int(sizes["events"] or 0), int(sizes["sessions"] or 0)
    largest = {"session_id": sizes["largest"], "events": int(sizes["largest_n"] or 0)}
    if max_session_events and largest["events"] > max_session_events:
        raise StallscanError(
            f"session {largest['session_id']} has {largest['events']:,} events, more than one task holds "
            f"(--max-session-events {max_session_events:,})",
            hint="a session group is replayed in one task's memory (about 3 KB per event): raise "
            "--max-session-events together with spark.executor.memory, or leave that session out",
        )
    groups = max(1, math.ceil(n_events / group_events)) if group_events else n_sessions
    params = task.TaskParams(
        threshold=float(threshold),
        retry_bound=int(retry_bound),
        config=cfg,
        thresholds=grid.tolist(),
        by=by,
        duckdb_memory=duckdb_memory,
    )
    spark.conf.set("spark.sql.shuffle.partitions", str(partitions or max(par, min(groups, 20_000))))
    key = F.pmod(F.xxhash64("session_id"), F.lit(groups)) if group_events else F.col("session_id")

    def run(tbl: pa.Table) -> pa.Table:  # executes in the Python worker of each task
        return task.replay_group(tbl, params)

    union = (
        df.groupBy(key.alias("_group"))
        .applyInArrow(run, schema=from_arrow_schema(task.union_schema()))
        .persist(StorageLevel.MEMORY_AND_DISK)
    )
    try:
        _lap("sizes")
        counts = {r["_table"]: int(r["count"]) for r in union.groupBy("_table").count().collect()}
        _lap("replay (groups)")
        out = output.rstrip("/")
        for t in task.TABLES:
            union.where(F.col("_table") == t).select(f"{t}.*").write.mode("overwrite").parquet(f"{out}/{t}")
            _lap(f"write {t}")
        keys = [c for c in task.CELL_SCHEMA.names if c != "n"]
        cells = (
            union.where(F.col("_table") == task.CELLS)
            .select(f"{task.CELLS}.*")
            .groupBy(*keys)
            .agg(F.sum("n").alias("n"))  # the per-(session, gap bin, flags) counts
        )
        cells.write.mode("overwrite").parquet(f"{out}/{task.CELLS}")
        cell_tbl = spark.read.parquet(f"{out}/{task.CELLS}").toArrow()
        _lap("sweep cells")
    finally:
        union.unpersist()
    res = SparkReplayResult(
        output=out,
        events=n_events,
        sessions=n_sessions,
        groups=groups,
        largest_session=largest,
        tables={t: counts.get(t, 0) for t in task.TABLES},
    )
    res.sweep = sweep_from_arrow(cell_tbl, grid, cost_auto_as_human, cost_human_as_auto, by, POLICIES, bootstrap, seed)
    _lap("sweep (driver)")
    res.seconds = time.perf_counter() - t0
    res.manifest = {
        "layout_version": LAYOUT_VERSION,
        "schema_version": SCHEMA_VERSION,
        "writer": f"stallscan {__version__} (spark replay)",
        "input": input_path,
        "threshold": float(threshold),
        "retry_bound": int(retry_bound),
        "groups": groups,
        "events": n_events,
        "sessions": n_sessions,
        "tables": {**res.tables, task.CELLS: cell_tbl.num_rows},
        "replay_info": _replay_info(retry_bound),
    }
    _write_text(spark, f"{out}/{MANIFEST}", json.dumps(res.manifest, indent=2) + "\n")
    return res


def _lap(what: str) -> None:
    """STALLSCAN_SPARK_TIMING=1: seconds per step on stderr."""
    now = time.perf_counter()
    if os.environ.get("STALLSCAN_SPARK_TIMING"):
        print(f"  {what:24} {now - getattr(_lap, 't', now):7.1f} s", file=sys.stderr, flush=True)
    _lap.t = now  # type: ignore[attr-defined]


def sweep_from_arrow(
    cell_tbl: pa.Table,
    grid: np.ndarray,
    a: float,
    b: float,
    by: str,
    policies: tuple[str, ...],
    bootstrap: int,
    seed: int,
) -> SweepResult:
    """The driver's half of the sweep: cells (session_id named) -> dense session index -> the local code.

    The index follows session_id in DuckDB's string order, which is the order the local sweep_input.sql
    ranks sessions in, so each bootstrap resample draws the same sessions as the local run."""
    import duckdb

    con = duckdb.connect()
    try:
        con.register("_cells", cell_tbl)
        arr = con.execute(
            "SELECT * EXCLUDE (session_id), (dense_rank() OVER (ORDER BY session_id) - 1)::BIGINT AS sess, "
            "md5_number_lower(session_id) AS skey "
            "FROM _cells ORDER BY session_id, bin"
        ).fetchnumpy()
    finally:
        con.close()
    cells = {k: np.asarray(v) for k, v in arr.items()}
    for k in ("human", "vgr_gap", "decided_human", "has_gap", "first_in_session", "by_fallback"):
        cells[k] = cells[k].astype(bool)
    cells["grp"] = cells["grp"].astype(object)
    return sweep_from_cells(cells, grid, a, b, by, policies, bootstrap, seed)


def _replay_info(retry_bound: int) -> dict[str, Any]:
    from stallscan.replay import stall_data

    return {
        "retry_bound": int(retry_bound),
        "narrated_bound": 2,
        "segmentation": "labels",
        "data_version": stall_data.load().version,
    }


def _write_text(spark: SparkSession, path: str, text: str) -> None:
    """Write one small file through Hadoop's FileSystem (so s3a:// and hdfs:// work like local paths)."""
    try:
        jvm = spark._jvm
        if jvm is None:
            raise AttributeError("no JVM")
        p = jvm.org.apache.hadoop.fs.Path(path)
        fs = p.getFileSystem(spark._jsc.hadoopConfiguration())
        stream = fs.create(p, True)
        stream.write(bytearray(text.encode("utf-8")))
        stream.close()
    except AttributeError:  # Spark Connect: no JVM handle; local paths only
        from pathlib import Path

        Path(path.removeprefix("file://")).write_text(text, encoding="utf-8")
