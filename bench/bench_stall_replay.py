#!/usr/bin/env python3
"""The stall replay alone: CPU seconds and peak RSS, this checkout and a baseline side by side.

    python bench/bench_replay.py --generate-only --db /tmp/x-10m.duckdb --events 10M
    python bench/bench_stall_replay.py /tmp/x-10m.duckdb --baseline /path/to/older/checkout

Each side is a process of its own (its checkout's code and queries: PYTHONPATH and cwd) on a copy of the
database: `label_events`, then `replay_stalls`. The sides run at the same time (on a loaded machine both
see the same load); compare CPU seconds (`time.process_time`, every thread of the process) and peak RSS
(`ru_maxrss`), not wall seconds across runs (a side's own CPU / wall is its parallelism). STALLSCAN_PROFILE=1 adds each side's statements, in CPU seconds.
`--pairs N` runs the sides one after the other instead, alternating (baseline, this; this, baseline; ...):
neither side runs beside the other, so the wall seconds of a pair can be compared too.
`--together` times both replays at once instead, as a first report runs them (stallscan.replay.together:
turn boundaries at 2.0, stalls at bound 3), and adds each replay's own wall seconds.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import subprocess
import sys

from sides import checkouts, interleaved, scratch_copy, side_env  # (bench/sides.py: the sides' runs and copies)

CHILD = r"""
import resource, sys, time
db, together = sys.argv[1], sys.argv[2] == "together"  # (db: a copy for this run, bench/sides.py)
wall_clock = time.perf_counter  # (before the profile swaps time.perf_counter for process_time)
from stallscan.store import sql
if sql.PROFILE is not None:
    sql.time.perf_counter = time.process_time  # the profile in CPU seconds
from stallscan.store.db import connect
from stallscan.replay.labels import label_events
from stallscan.replay.stalls import replay_stalls
con = connect(db)
from stallscan.store import stamps
stamps.record_changes(con, "SELECT session_id FROM events")  # as an ingest does: replay_stalls reuses the labels
label_events(con)
sql.report("labels")
rss_labels = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
c0, w0 = time.process_time(), wall_clock()
walls = ""
if together:
    from stallscan.replay.together import replay_together
    seconds = replay_together(con, 2.0, 3) or {}
    if sql.PROFILE is None:  # (profiled, time.perf_counter is process_time: together.py's seconds are CPU)
        walls = " " + " ".join(f"{k}_wall={v:.2f}" for k, v in seconds.items())
info = replay_stalls(con)  # (after replay_together: reused)
cpu, wall = time.process_time() - c0, wall_clock() - w0
sql.report("stalls")
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(f"RESULT cpu={cpu:.2f} wall={wall:.2f} rss={rss:.0f} rss_labels={rss_labels:.0f} rounds={info.rounds} turns={info.turns}{walls}")
con.close()
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("db", help="a database with events (bench_replay.py --generate-only)")
    ap.add_argument("--baseline", help="an older checkout, run at the same time")
    ap.add_argument(
        "--pairs",
        type=int,
        default=0,
        help="run the sides one after the other instead, alternating (baseline, this; this, baseline; ...), N pairs",
    )
    ap.add_argument("--together", action="store_true", help="both replays at once (stallscan.replay.together)")
    args = ap.parse_args()
    mode = "together" if args.together else "stalls"
    db, sides = os.path.abspath(args.db), checkouts(args.baseline)
    if args.pairs:
        interleaved(CHILD, db, [mode], sides, args.pairs)  # (baseline first)
        return
    with contextlib.ExitStack() as copies:  # (both sides at once, each on its own copy)
        procs = {
            name: subprocess.Popen(
                [sys.executable, "-c", CHILD, copies.enter_context(scratch_copy(db)), mode],
                cwd=root,
                env=side_env(root),
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for name, root in sides.items()
        }
        for name, p in procs.items():
            out, err = p.communicate()
            sys.stderr.write(f"-- {name} --\n{err}")
            line = next((x for x in out.splitlines() if x.startswith("RESULT ")), f"RESULT failed ({p.returncode})")
            print(f"{name:10} {line[len('RESULT ') :]}")


if __name__ == "__main__":
    main()
