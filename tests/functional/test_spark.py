"""The Spark replay (local[1]) equals the local DuckDB replay, row for row, on sample_logs + the real files.

One SparkSession and one Spark run for the whole module: the corpus is ingested into DuckDB, exported in
the hand-off layout (events partitioned by session_bucket), replayed locally by the same stallscan.replay
functions over the whole database, and on Spark in many small groups (group_events=1500, so sessions of
different buckets meet and part in groups). Skips, saying why, only without pyspark or a Java runtime.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from stallscan.export import connect_parquet, export_tables
from stallscan.ingest.run import ingest_paths
from stallscan.spark import task
from stallscan.store.db import connect
from stallscan.store.errors import StallscanError
from stallscan.sweep.core import run_sweep, thresholds_grid
from tests.helpers import SAMPLES, real_root

BOOT = 200
GRID = thresholds_grid(0.0, 30.0, 0.05)


def _need_spark():
    try:
        import pyspark
    except ImportError:
        pytest.skip("pyspark is not installed (pip install -e '.[spark]'; .ci/run installs it)")
    if int(pyspark.__version__.split(".")[0]) < 4:
        pytest.skip(f"pyspark {pyspark.__version__} < 4 has no applyInArrow")
    java = shutil.which("java") or (
        os.environ.get("JAVA_HOME") and Path(os.environ["JAVA_HOME"], "bin", "java").is_file()
    )
    if not java:
        pytest.skip("no Java runtime on PATH or JAVA_HOME (apt-get install openjdk-17-jre-headless)")


@pytest.fixture(scope="module")
def spark():
    _need_spark()
    from stallscan.spark.job import spark_session

    s = spark_session(
        # one core: one Python worker (reused for every group) imports stallscan, duckdb and pyarrow once,
        # not two; the groups, the shuffle and the replay's output do not depend on the number of cores
        "local[1]",
        {
            "spark.sql.shuffle.partitions": "4",
            "spark.default.parallelism": "1",
            "spark.ui.enabled": "false",
            "spark.driver.memory": "1g",
            # a short-lived JVM: the C1 compiler alone and the serial collector spend less than half the
            # CPU of the default tiered JIT + G1 on this module (the replay's output does not depend on it); the
            # JVM loads thousands of classes from Spark's own jars, and checking their bytecode on load is a
            # few CPU seconds a test run need not spend
            "spark.driver.extraJavaOptions": "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC "
            "-XX:+UnlockDiagnosticVMOptions -XX:-BytecodeVerificationRemote",
        },
    )
    s.sparkContext.setLogLevel("ERROR")
    yield s
    s.stop()


@pytest.fixture(scope="module")
def run(spark, tmp_path_factory, request):
    from stallscan.spark.job import spark_replay

    tmp = tmp_path_factory.mktemp("spark")
    real = real_root()
    db = tmp / "local.duckdb"
    # the run's ingest of the real files (built once, shared with other modules) with sample_logs added, the
    # smaller of the two; without the real files, the run's ingest of sample_logs alone
    shutil.copy(request.getfixturevalue("real_ingested_file" if real.is_dir() else "sample_ingested_file"), db)
    con = connect(db)
    if real.is_dir():
        ingest_paths(con, [str(SAMPLES)])
    export_tables(con, tmp / "export", ["events"], ["session_bucket"], buckets=8)
    task.replay_tables(con, 2.0, 3, {})  # the local replay: the whole corpus in one DuckDB
    local_sweep = run_sweep(con, GRID, bootstrap=BOOT, seed=0)
    con.close()
    res = spark_replay(
        spark, str(tmp / "export" / "events"), str(tmp / "out"), config={}, group_events=1500, bootstrap=BOOT, seed=0
    )
    return {"db": db, "out": tmp / "out", "res": res, "local_sweep": local_sweep, "real": real.is_dir(), "tmp": tmp}


def _needs_real(run):
    if not run["real"]:
        pytest.skip(f"real transcripts not found at {real_root()} (set STALLSCAN_REAL_DATA); sample_logs alone ran")


def test_the_run_covers_both_corpora_in_many_groups(run):
    _needs_real(run)
    res = run["res"]
    assert res.groups >= 3 and res.sessions > 50
    manifest = json.loads((run["out"] / "_stallscan.json").read_text())
    assert manifest["layout_version"] == 1 and manifest["tables"]["turns"] == res.tables["turns"]


@pytest.mark.parametrize("table", task.TABLES)
def test_every_table_equals_the_local_replay_row_for_row(run, table):
    con = connect(run["db"], read_only=True)
    spark_rows = f"read_parquet('{run['out'] / table}/*.parquet')"
    local_n = con.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
    spark_n = con.execute(f"SELECT count(*) FROM {spark_rows}").fetchone()[0]
    only_local = con.execute(f"SELECT count(*) FROM (FROM {table} EXCEPT ALL FROM {spark_rows})").fetchone()[0]
    only_spark = con.execute(f"SELECT count(*) FROM (FROM {spark_rows} EXCEPT ALL FROM {table})").fetchone()[0]
    local_cols = con.execute(f"DESCRIBE {table}").fetchall()
    spark_cols = con.execute(f"DESCRIBE SELECT * FROM {spark_rows}").fetchall()
    con.close()
    assert local_n > 0 and spark_n == local_n == run["res"].tables[table]
    assert (only_local, only_spark) == (0, 0)
    assert [(c[0], c[1]) for c in spark_cols] == [(c[0], c[1]) for c in local_cols]


def test_sweep_recommendation_and_interval_equal(run):
    spark_sweep, local = run["res"].sweep, run["local_sweep"]
    assert spark_sweep.recommendation == local.recommendation
    _needs_real(run)  # the size figures below are the real corpus's
    vgr = local.recommendation[("router", "all")]
    assert vgr["bootstrap"] == BOOT and vgr["interval"] is not None and vgr["n_gap_decided"] > 100
    for a, b in zip(spark_sweep.curves, local.curves):
        assert (a.policy, a.group) == (b.policy, b.group)
        assert np.array_equal(a.cost, b.cost)
        assert all(np.array_equal(a.all[k], b.all[k]) for k in ("tp", "fp", "fn", "tn"))


def test_report_from_parquet_equals_the_database_report(run):
    from stallscan.report.build import ReportOptions, build_report, public

    opts = ReportOptions(bootstrap=BOOT)
    db_copy = run["tmp"] / "report.duckdb"
    shutil.copy(run["db"], db_copy)
    con = connect(db_copy)
    want = public(build_report(con, opts))
    con.close()
    pq, manifest = connect_parquet(run["out"])
    given = ReportOptions(bootstrap=BOOT, threshold=manifest["threshold"], retry_bound=manifest["retry_bound"])
    given._replayed = True
    got = public(build_report(pq, given))
    pq.close()
    for d in (want, got):  # file bookkeeping is not part of a replay's output
        for k in ("files_by_status", "skipped", "rejects", "pending_files"):
            d["corpus"].pop(k, None)
        for k in ("files_in_database", "skipped_lines", "rejected_lines"):  # (the same tables, counted)
            d["corpus"]["population"].pop(k, None)
    assert json.dumps(got, default=str, sort_keys=True) == json.dumps(want, default=str, sort_keys=True)


def test_a_giant_session_is_refused_before_any_task(spark, run, tmp_path):
    from stallscan.spark.job import spark_replay

    with pytest.raises(StallscanError, match=r"session .* has [\d,]+ events, more than one task holds"):
        spark_replay(spark, str(run["tmp"] / "export" / "events"), str(tmp_path / "o"), max_session_events=3)
    assert not (tmp_path / "o").exists()
