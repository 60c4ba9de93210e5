"""Reproduce stallscan's threshold sweep from the parquet export, with polars and numpy only.

    stallscan export out/ --tables turn_boundaries
    python examples/sweep_from_parquet.py out/

This is the script twin of examples/sweep_from_parquet.ipynb: everything below the marker line is the
notebook's code cells, cell for cell (tests/functional/test_examples.py checks it, and runs this file against
`stallscan sweep`). Only the lines above the marker are the script's own: they take the export folder
from the command line; the notebook takes it from $STALLSCAN_EXPORT_DIR (default out/) and never reads
sys.argv, which in a kernel holds the kernel's own arguments.
"""

import os
import sys

if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] in ("-h", "--help"):
        print("usage: python examples/sweep_from_parquet.py EXPORT_DIR  (a folder written by "
              "`stallscan export EXPORT_DIR --tables turn_boundaries`)", file=sys.stderr)
        sys.exit(2)
    os.environ["STALLSCAN_EXPORT_DIR"] = sys.argv[1]

# ---- notebook code cells below ----
import glob
import json
import os

import numpy as np
import polars as pl

# the folder `stallscan export DIR --tables turn_boundaries` wrote
export_dir = os.environ.get("STALLSCAN_EXPORT_DIR", "out")
pattern = f"{export_dir}/turn_boundaries/**/*.parquet"
if not glob.glob(pattern, recursive=True):
    raise SystemExit(f"no turn_boundaries parquet under {export_dir}/: run "
                     f"`stallscan export {export_dir} --tables turn_boundaries` (or set STALLSCAN_EXPORT_DIR)")

# every user-role event that starts a model request, except tool results
tb = pl.read_parquet(pattern, hive_partitioning=True)
rows = tb.filter(pl.col("starts_request") & (pl.col("origin") != "tool_result"))
by_gap = rows.filter(pl.col("decided_by") == "gap")  # the events the gap rule decides
fixed = rows.filter(pl.col("decided_by") != "gap")   # header / first / completion / no_time: threshold-free

# one sorted pass: count gaps below each threshold with searchsorted
thresholds = np.round(np.arange(0, 30 + 1e-9, 0.05), 10)
human_gaps = np.sort(by_gap.filter(pl.col("is_human_turn"))["gap_s"].to_numpy())
auto_gaps = np.sort(by_gap.filter(~pl.col("is_human_turn"))["gap_s"].to_numpy())
human_as_auto = np.searchsorted(human_gaps, thresholds, side="left")                # human, gap < t
auto_as_human = len(auto_gaps) - np.searchsorted(auto_gaps, thresholds, side="left")  # automatic, gap >= t

fixed_auto_as_human = fixed.filter(~pl.col("is_human_turn") & (pl.col("decision") == "human")).height
fixed_human_as_auto = fixed.filter(pl.col("is_human_turn") & (pl.col("decision") == "continuation")).height
cost = auto_as_human + fixed_auto_as_human + human_as_auto + fixed_human_as_auto

# the same curve from the database itself, through the notebook API (when the .duckdb file is at hand)
db = os.environ.get("STALLSCAN_DB", "stallscan.duckdb")
api = None
if os.path.exists(db):
    import stallscan

    with stallscan.open(db) as s:
        api_curve = s.sweep(step=0.05, policy="router").filter((pl.col("population") == "all") & (pl.col("group") == "all"))
        api = s.recommendations(step=0.05, policy="router", bootstrap=0).filter(pl.col("policy") == "router").row(0, named=True)
    assert api_curve["cost"].to_list() == cost.astype(float).tolist(), "parquet and database curves differ"

best = int(np.argmin(cost))  # the smallest threshold among ties
at_2s = int(np.searchsorted(thresholds, 2.0))
curve = pl.DataFrame({"threshold": thresholds, "auto_as_human": auto_as_human + fixed_auto_as_human,
                      "human_as_auto": human_as_auto + fixed_human_as_auto, "cost": cost})
print(curve.filter(pl.col("threshold").is_in([0.5, 1.0, 2.0, 5.0, 10.0])))
print(json.dumps({"threshold": float(thresholds[best]), "cost": float(cost[best]),
                  "cost_at_2s": float(cost[at_2s]), "events": rows.height, "gap_decided": by_gap.height,
                  "api_threshold": api and api["threshold"], "api_cost": api and api["cost"]}))
