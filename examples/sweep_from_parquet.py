"""Reproduce stallscan's threshold sweep from the parquet export, with polars and numpy only.

    stallscan export out/ --tables turn_boundaries
    python examples/sweep_from_parquet.py out/

This is the script twin of examples/sweep_from_parquet.ipynb (the notebook's code cells are this file's
body, checked by tests/test_examples.py, which also runs it against `stallscan sweep`).
"""
import json
import sys

import numpy as np
import polars as pl

export_dir = sys.argv[1] if len(sys.argv) > 1 else "out"

# every user-role event that starts a model request, except tool results
tb = pl.read_parquet(f"{export_dir}/turn_boundaries/**/*.parquet", hive_partitioning=True)
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

best = int(np.argmin(cost))  # the smallest threshold among ties
at_2s = int(np.searchsorted(thresholds, 2.0))
curve = pl.DataFrame({"threshold": thresholds, "auto_as_human": auto_as_human + fixed_auto_as_human,
                      "human_as_auto": human_as_auto + fixed_human_as_auto, "cost": cost})
print(curve.filter(pl.col("threshold").is_in([0.5, 1.0, 2.0, 5.0, 10.0])))
print(json.dumps({"threshold": float(thresholds[best]), "cost": float(cost[best]),
                  "cost_at_2s": float(cost[at_2s]), "events": rows.height, "gap_decided": by_gap.height}))
