"""`stallscan spark replay`: the same replay on Apache Spark (pip install 'stallscan[spark]')."""

from __future__ import annotations

import json
import sys

import typer

from stallscan.replay.boundaries_ref import GAP_THRESHOLD_S
from stallscan.replay.stall_rules import RETRY_BOUND
from stallscan.store.errors import StallscanError

from ._lazy import Console
from .common import _err_console, _guard
from .options import Bootstrap, Config, RetryBound, Seed, Threshold

app = typer.Typer()  # this module's commands (stallscan.cli.COMMANDS names it)


spark_app = typer.Typer(no_args_is_help=True, help="Run the replay on Apache Spark (PySpark >= 4).")
app.add_typer(spark_app, name="spark")


@spark_app.command("replay")
@_guard
def spark_replay_cmd(
    input_path: str = typer.Argument(
        ..., help="Events parquet (stallscan export --tables events): local, s3a://, hdfs://."
    ),
    output: str = typer.Argument(
        ..., help="Folder to write user_labels/ turn_boundaries/ rounds/ stalls/ turns/ into."
    ),
    threshold: Threshold = GAP_THRESHOLD_S,
    retry_bound: RetryBound = RETRY_BOUND,
    config: Config = None,  # (read on the driver)
    master: str | None = typer.Option(
        None, "--master", help="Spark master, e.g. local[4]; default: what spark-submit set, else local[*]."
    ),
    group_events: int = typer.Option(
        200_000, "--group-events", help="Events per task group (whole sessions); 0: one group per session."
    ),
    max_session_events: int = typer.Option(
        2_000_000, "--max-session-events", help="Refuse a session larger than this (it must fit one task)."
    ),
    partitions: int = typer.Option(
        0, "--partitions", help="Shuffle partitions for the replay (0: one per group, at least one per core)."
    ),
    task_memory: str | None = typer.Option(None, "--task-memory", help="DuckDB memory limit per task, e.g. 2GB."),
    by: str = typer.Option("none", "--by", help="Sweep groups: none, harness, source_format or model."),
    bootstrap: Bootstrap = 1000,
    seed: Seed = 0,
    conf: list[str] | None = typer.Option(
        None, "--conf", help="Spark setting KEY=VALUE (repeatable), e.g. spark.driver.memory=8g in local mode."
    ),
    out: str = typer.Option("table", "--format", help="table or json."),
) -> None:
    """Replay events parquet on Spark; write the derived tables as parquet and print the sweep's answer."""
    from stallscan.spark.job import spark_replay, spark_session

    if out not in ("table", "json"):
        raise StallscanError(f"unknown --format {out!r}", hint="table or json")
    import os

    settings = {}
    for kv in conf or []:
        if "=" not in kv:
            raise StallscanError(f"--conf takes KEY=VALUE, not {kv!r}", hint="e.g. --conf spark.driver.memory=8g")
        k, v = kv.split("=", 1)
        settings[k.strip()] = v.strip()
    chosen = master or (None if os.environ.get("SPARK_ENV_LOADED") else "local[*]")
    if (chosen or "").startswith("local"):
        # local mode runs the tasks inside the driver's JVM: Spark's 1g default heap is too small for
        # 200,000-event groups (OutOfMemoryError: Java heap space, seen at 10 M events)
        settings.setdefault("spark.driver.memory", "4g")
    spark = spark_session(chosen, settings)
    spark.sparkContext.setLogLevel("ERROR")
    res = spark_replay(
        spark,
        input_path,
        output,
        threshold=threshold,
        retry_bound=retry_bound,
        config=config,
        group_events=group_events,
        max_session_events=max_session_events,
        by={"harness": "source_format"}.get(by, by),
        bootstrap=bootstrap,
        seed=seed,
        duckdb_memory=task_memory,
        partitions=partitions,
    )
    recs = [dict(v) for v in res.sweep.recommendation.values()] if res.sweep else []
    if out == "json":
        sys.stdout.write(json.dumps({**res.manifest, "recommendations": recs}, indent=1) + "\n")
        return
    c = Console()
    c.print(
        f"{res.events:,} events in {res.sessions:,} sessions, {res.groups:,} group(s), "
        f"largest session {res.largest_session['events']:,} events; {res.seconds:.1f} s",
        highlight=False,
    )
    for t, n in res.tables.items():
        c.print(f"{t:16} {n:>10,} rows  {res.output}/{t}", highlight=False)
    from stallscan.report.render_sweep import sweep_renderable, sweep_view

    if res.sweep is not None:
        c.print(sweep_renderable(sweep_view(res.sweep)))
    _err_console().print(f"report: stallscan report --from-parquet {res.output}", highlight=False)
