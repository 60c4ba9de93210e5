#!/usr/bin/env python3
"""Spark local-mode replay beside the local DuckDB replay, on the same events parquet, in one run.

    python bench/bench_spark.py --events 10M [--master local[2]] [--group-events 200000] [--keep DIR]

1. generates N events in sessions (bench_replay.py's generator: human prompts, tool rounds, tool results,
   nudges, dropped tool calls, finals) and writes them in the hand-off layout
   (`export --tables events --partition-by session_bucket`);
2. local: a fresh process loads that parquet into an in-memory DuckDB, runs the replay
   (stallscan.spark.task.replay_tables: labels, boundaries, stalls), the 601-threshold sweep with the
   bootstrap, and writes the five tables as parquet;
3. spark: `python -m stallscan spark replay EVENTS OUT --master ...` (the CLI a user runs), same sweep;
4. prints wall time, events/s and peak memory of each (the sum of RSS over the process tree -- JVM,
   Python workers, DuckDB -- sampled every 0.2 s) and the ratios; checks the two outputs have equal
   row counts and the same recommendation.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT))


def tree_rss(pid: int) -> int:
    """Bytes of RSS summed over pid and all its descendants (Linux /proc)."""
    kids: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as fh:
                parts = fh.read().rsplit(")", 1)[1].split()
            kids.setdefault(int(parts[1]), []).append(int(d))
            rss[int(d)] = int(parts[21]) * os.sysconf("SC_PAGE_SIZE")
        except (OSError, IndexError, ValueError):
            continue
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        total += rss.get(p, 0)
        todo += kids.get(p, [])
    return total


def run_measured(cmd: list[str], log: Path, env: dict | None = None) -> tuple[float, int, str]:
    """(wall s, peak tree RSS bytes, stdout) of a command; its stderr goes to `log`."""
    t0 = time.perf_counter()
    err = open(log, "w")
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err, text=True, env=env)
    peak = [0]

    def sample():
        while proc.poll() is None:
            peak[0] = max(peak[0], tree_rss(proc.pid))
            time.sleep(0.2)

    th = threading.Thread(target=sample, daemon=True)
    th.start()
    out, _ = proc.communicate()
    th.join()
    err.close()
    if proc.returncode:
        tail = "".join(log.read_text(errors="replace").splitlines(True)[-15:])
        raise SystemExit(f"{' '.join(cmd)} failed with exit {proc.returncode}:\n{tail}")
    return time.perf_counter() - t0, peak[0], out


def local_replay(events: str, out: str, bootstrap: int) -> None:
    """Child process: the local DuckDB replay of the parquet (what a single machine does)."""
    from stallscan.spark.task import TABLES, replay_tables
    from stallscan.store.db import connect
    from stallscan.sweep.core import run_sweep, thresholds_grid

    con = connect(":memory:")
    cols = ", ".join(r[0] for r in con.execute("DESCRIBE events").fetchall())
    con.execute(
        f"INSERT INTO events SELECT {cols} FROM read_parquet('{events}/**/*.parquet', hive_partitioning = true)"
    )
    replay_tables(con, 2.0, 3, {})
    res = run_sweep(con, thresholds_grid(), bootstrap=bootstrap, seed=0)
    counts = {}
    for t in TABLES:
        os.makedirs(f"{out}/{t}", exist_ok=True)
        con.execute(f"COPY {t} TO '{out}/{t}/data.parquet' (FORMAT parquet, COMPRESSION zstd)")
        counts[t] = con.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
    recs = [dict(v) for v in res.recommendation.values()]
    print(json.dumps({"tables": counts, "recommendations": recs}))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--events", default="10M")
    ap.add_argument("--per-session", type=int, default=60)
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--group-events", type=int, default=200_000)
    ap.add_argument("--bootstrap", type=int, default=1000)
    ap.add_argument("--driver-memory", default="6g", help="local mode: the JVM heap the tasks share")
    ap.add_argument("--keep", help="work directory to keep (default: a temp dir, removed)")
    ap.add_argument("--_local", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args._local:
        return local_replay(args._local[0], args._local[1], args.bootstrap)

    from bench_replay import GEN, parse_n

    from stallscan.export import export_tables
    from stallscan.store.db import connect

    n = parse_n(args.events)
    work = Path(args.keep or tempfile.mkdtemp(prefix="stallscan-bench-spark-"))
    work.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    stamp = work / "export" / f"generated-{n}-{args.per_session}"
    if stamp.exists():  # --keep DIR of an earlier run with the same arguments: reuse its parquet
        sessions = -(-n // args.per_session)
    else:
        con = connect(":memory:")
        con.execute(GEN.replace("$per", str(args.per_session)).replace("$n", str(n)))
        export_tables(con, work / "export", ["events"], ["session_bucket"], buckets=64)
        sessions = con.execute("SELECT count(DISTINCT session_id) FROM events").fetchall()[0][0]
        con.close()
        stamp.touch()
    size = sum(f.stat().st_size for f in (work / "export" / "events").rglob("*.parquet"))
    print(
        f"wrote {n:,} events in {sessions:,} sessions as parquet ({size / 1e6:,.0f} MB) "
        f"in {time.perf_counter() - t0:.1f} s",
        flush=True,
    )
    events = str(work / "export" / "events")
    py = sys.executable
    lw, lm, lout = run_measured(
        [py, __file__, "--bootstrap", str(args.bootstrap), "--_local", events, str(work / "local")], work / "local.log"
    )
    (work / "local.json").write_text(lout)
    print(f"local DuckDB replay   {lw:8.1f} s  {n / lw:>12,.0f} events/s  peak {lm / 2**20:8,.0f} MiB", flush=True)
    env = {**os.environ, "PYSPARK_PYTHON": py}
    sw, sm, sout = run_measured(
        [py, "-m", "stallscan", "spark", "replay", events, str(work / "spark"), "--master", args.master,
         "--group-events", str(args.group_events), "--bootstrap", str(args.bootstrap), "--format", "json",
         "--conf", f"spark.driver.memory={args.driver_memory}"],
        work / "spark.log",
        env,
    )  # fmt: skip
    print(
        f"spark {args.master:10} replay {sw:7.1f} s  {n / sw:>12,.0f} events/s  peak {sm / 2**20:8,.0f} MiB",
        flush=True,
    )
    local, spark = json.loads(lout), json.loads(sout)
    print(f"spark / local: wall {sw / lw:.2f}x, peak memory {sm / lm:.2f}x; groups {spark['groups']}")
    same_rows = local["tables"] == {t: spark["tables"][t] for t in local["tables"]}
    same_rec = local["recommendations"] == spark["recommendations"]
    print(f"row counts equal: {same_rows}; recommendations equal: {same_rec}")
    print(f"  rows: {local['tables']}")
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
