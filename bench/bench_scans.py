#!/usr/bin/env python3
"""The replay's two column scans alone: CPU seconds of each, this checkout and a baseline interleaved.

    python bench/bench_replay.py --generate-only --db /tmp/x-2m.duckdb --events 2M
    STALLSCAN_PROFILE=1 python bench/bench_scans.py /tmp/x-2m.duckdb --baseline /path/to/older/checkout

Each side is a process of its own (its checkout's code and queries: PYTHONPATH and cwd) on a copy of the
database: `label_events`, the stall replay's inputs of the turn scan (its data, turn starts and looked-up
events), then `--repeat` times the previous-reply scan (`scan_bounds.prev_replies`) and the turn scan
(`stall_scans.turn_numbers`), each run's CPU seconds (`time.process_time`, every thread). The sides alternate
(baseline, this; this, baseline; ...). `STALLSCAN_SCAN_BATCH_ROWS=671088` gives the batches of two replays run
at once at the default memory budget; STALLSCAN_PROFILE=1 adds the last run's steps, in CPU seconds.
"""

from __future__ import annotations

import argparse
import os

from sides import checkouts, interleaved  # (bench/sides.py: one side at a time, the order flipped each pair)

CHILD = r"""
import sys, time
db, repeat = sys.argv[1], int(sys.argv[2])  # (db: a copy for this run, bench/sides.py)
from stallscan.store import sql
if sql.PROFILE is not None:
    sql.time.perf_counter = time.process_time  # the profile in CPU seconds
from stallscan.store.db import connect
from stallscan.store import stamps
from stallscan.replay import scan_bounds, stall_data, stall_scans
from stallscan.replay.labels import label_events
con = connect(db)
stamps.record_changes(con, "SELECT session_id FROM events")
label_events(con)
data = stall_data.install(con)
sql.run(con, "replay/stall_turn_starts_labels")
sql.run(con, "replay/stall_lookups", {"bg_tools": "|".join(f"(?:{bg.tool})" for bg in data.background) or None})
for name, scan in (("bounds", scan_bounds.prev_replies), ("turns", stall_scans.turn_numbers)):
    runs = []
    for _ in range(repeat):
        if sql.PROFILE is not None:
            sql.PROFILE.clear()
        c0 = time.process_time()
        scan(con)
        runs.append(time.process_time() - c0)
    sql.report(name)
    print(f"RESULT {name} " + " ".join(f"{t:.3f}" for t in runs) + f" min={min(runs):.3f}")
con.close()
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("db", help="a database with events (bench_replay.py --generate-only)")
    ap.add_argument("--baseline", help="an older checkout, run alternating with this one")
    ap.add_argument("--pairs", type=int, default=2, help="runs of each side (default 2)")
    ap.add_argument("--repeat", type=int, default=3, help="runs of each scan in a process (default 3)")
    args = ap.parse_args()
    interleaved(CHILD, os.path.abspath(args.db), [str(args.repeat)], checkouts(args.baseline), args.pairs)


if __name__ == "__main__":
    main()
