#!/usr/bin/env python3
"""CPU seconds of the replay's stages on N generated events, this checkout and a baseline interleaved.

    python bench/bench_replay_cpu.py --events 2M --baseline /tmp/base --repeat 2

On a loaded machine wall-clock figures say little; this prints, per stage, the process's user + system CPU
seconds (every DuckDB thread included): labels, turn boundaries (with the rule variants), the rule variants
again alone, a 1,000-threshold x 1,000-resample sweep of the router and of the router + its 3 variants.
The events are bench_replay.py's, generated once into a file; each run works on its own copy of it, in its
own process (the baseline's with its checkout first on sys.path and as the current directory), runs
alternating. A digest of the four-policy sweep's recommendations and variant comparison is printed with
each run: equal digests, equal figures.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile

from installed import ENV  # (bench/installed.py: children run as installed)

STAGES = ("labels", "boundaries", "variants", "sweep_router", "sweep_4_policies")


def cpu() -> float:
    t = os.times()
    return t.user + t.system


def one_run(db: str) -> None:
    """(child process) The stages on the events database `db` (a copy); prints one JSON line."""
    import numpy as np

    from stallscan.replay.boundaries import replay_boundaries
    from stallscan.replay.boundary_variants import VARIANTS, replay_variants
    from stallscan.replay.labels import label_events
    from stallscan.store import stamps
    from stallscan.store.db import connect
    from stallscan.sweep.core import run_sweep

    con = connect(db)
    stamps.record_changes(con, "SELECT session_id FROM events")  # as an ingest does
    grid = np.linspace(0, 30, 1000)
    out: dict[str, object] = {}
    steps = (
        ("labels", lambda: label_events(con)),
        ("boundaries", lambda: replay_boundaries(con, 2.0)),
        ("variants", lambda: replay_variants(con)),
        ("scope", lambda: con.execute("CREATE TEMP TABLE scope_sessions AS SELECT DISTINCT session_id FROM events")),
        ("sweep_router", lambda: run_sweep(con, grid, bootstrap=1000, policies=("router",))),
        ("sweep_4_policies", lambda: run_sweep(con, grid, bootstrap=1000, policies=("router", *VARIANTS))),
    )
    res = None
    for name, fn in steps:
        c0 = cpu()
        res = fn()
        out[name] = round(cpu() - c0, 2)
    figures = [res.recommendation[k] for k in sorted(res.recommendation)] + res.variants  # type: ignore[union-attr]
    out["digest"] = hashlib.md5(json.dumps(figures, default=str, sort_keys=True).encode()).hexdigest()[:12]
    con.close()
    print("CPU " + json.dumps(out))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--events", default="2M")
    ap.add_argument("--baseline", help="an older checkout, run interleaved with this one on the same events")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--run", help=argparse.SUPPRESS)  # (child) the database copy to run the stages on
    args = ap.parse_args()
    if args.run:
        one_run(args.run)
        return
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    with tempfile.TemporaryDirectory(prefix="stallscan-bench-cpu-") as tmp:
        events = os.path.join(tmp, "events.duckdb")
        subprocess.run(
            [sys.executable, os.path.join(here, "bench", "bench_replay.py"), "--generate-only", "--db", events,
             "--events", args.events],
            check=True,
        )  # fmt: skip
        who = [("this", here)] + ([("baseline", os.path.abspath(args.baseline))] if args.baseline else [])
        print(f"{'run':10} " + " ".join(f"{s:>16}" for s in STAGES) + "  digest        load")
        for _ in range(args.repeat):
            for name, root in who[::-1]:  # (baseline first)
                copy = os.path.join(tmp, "run.duckdb")
                shutil.copyfile(events, copy)
                load = os.getloadavg()[0]
                env = {**ENV, "PYTHONPATH": root}
                cmd = [sys.executable, os.path.abspath(__file__), "--run", copy]
                done = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True)
                for f in (copy, copy + ".wal"):
                    if os.path.exists(f):
                        os.remove(f)
                line = next((x for x in done.stdout.splitlines() if x.startswith("CPU ")), None)
                if done.returncode or line is None:
                    sys.stdout.write(done.stderr[-2000:])
                    raise SystemExit(f"{name} run failed")
                got = json.loads(line[4:])
                print(f"{name:10} " + " ".join(f"{got[s]:16.2f}" for s in STAGES) + f"  {got['digest']}  {load:.1f}")


if __name__ == "__main__":
    main()
