#!/usr/bin/env python3
"""CPU seconds of the report's threshold sweep after one new session, this checkout against another.

    python bench/bench_sweep_one_session.py --db THIS.duckdb --new DIR [--baseline BASE --base-db BASE.duckdb]
        [--repeat 2]

Each database must be fully derived by its own checkout (`stallscan report --format json --db DB`, as
bench/bench_report.py's one-session step makes them). Per repeat and checkout, interleaved: a copy of the
database ingests DIR (one new session), brings labels and boundaries up to date, then `run_sweep` runs as
the report's threshold section calls it (its grid, five policies, 1,000 resamples, the sweep_bins refresh
included); the CPU seconds of that call (resource.getrusage) are printed, with the router's interval.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from installed import ENV  # (bench/installed.py: children run as installed)

ROOT = Path(__file__).resolve().parents[1]

CHILD = """
import resource, sys
from stallscan.store.db import connect
from stallscan.ingest.run import ingest_paths
from stallscan.replay import registry
from stallscan.sweep.core import ALL_POLICIES, run_sweep, thresholds_grid
con = connect(sys.argv[1])
ingest_paths(con, [sys.argv[2]])
for t in ("user_labels", "turn_boundaries", "turn_boundary_variants"):
    registry.refresh(con, t)
con.execute("CREATE OR REPLACE TEMP TABLE scope_sessions AS SELECT DISTINCT session_id FROM events")
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime
c0 = cpu()
res = run_sweep(con, thresholds_grid(0.0, 30.0, 0.05), bootstrap=1000, seed=0, policies=ALL_POLICIES, current=2.0)
print(f"{cpu() - c0:.2f} s CPU, router interval {res.recommendation[('router', 'all')]['interval']}")
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--db", required=True)
    ap.add_argument("--new", required=True, help="a folder holding the one new session")
    ap.add_argument("--baseline", help="another checkout")
    ap.add_argument("--base-db", help="the database the baseline derived")
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args()
    codes = [("this", ROOT, Path(args.db))]
    if args.baseline:
        codes.append(("baseline", Path(args.baseline).resolve(), Path(args.base_db or args.db)))
    print(f"machine load average: {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.repeat):
            for label, root, db in codes:
                copy = Path(tmp) / f"{label}_{r}.duckdb"
                shutil.copy(db, copy)
                out = subprocess.run(
                    [sys.executable, "-c", CHILD, str(copy), str(Path(args.new).resolve())],
                    cwd=root,
                    env={**ENV, "PYTHONPATH": str(root)},
                    capture_output=True,
                    text=True,
                )
                print(f"  {label} repeat {r}: {out.stdout.strip() or out.stderr.strip().splitlines()[-1]}")


if __name__ == "__main__":
    main()
