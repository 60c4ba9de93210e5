#!/usr/bin/env python3
"""The threshold interval under the per-session Poisson bootstrap (stallscan.sweep.bootstrap) beside the
multinomial one it replaced (n sessions drawn with replacement, one `rng.integers` call per resample), over
several seeds and resample counts, on a database stallscan made (`stallscan report PATH --db DB` first):

    python bench/bootstrap_schemes.py DB [--seeds 5] [--boots 200,1000] [--policies router,gap-only]
        [--harness FORMAT] [--costs A,B]   (the sessions of one source_format only: fewer sessions, wider intervals)

Per policy and resample count it prints each seed's 2.5 % / 97.5 % interval under both schemes, then the
spread of each bound over the seeds: the two schemes agree when their bounds differ by about as much as
one scheme's bounds differ between seeds (docs/incremental.md, "The threshold bootstrap").
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from stallscan.store.db import connect
from stallscan.sweep import bins, bootstrap
from stallscan.sweep.core import thresholds_grid
from stallscan.sweep.plateau import choose_rows
from stallscan.sweep.point import point


def multinomial(
    parts: bootstrap.Parts, n_sess: int, t: np.ndarray, n_boot: int, seed: int, a: float, b: float
) -> np.ndarray:
    """The former scheme: resample r draws n_sess sessions with replacement."""
    (gh, go, cells), nb = parts, len(t) + 1
    rng = np.random.default_rng(seed)
    costs = np.empty((n_boot, len(t)))
    for r in range(n_boot):
        w = np.bincount(rng.integers(0, n_sess, n_sess), minlength=n_sess).astype(float)
        h = np.bincount(gh[1], w[gh[0]] * gh[2], minlength=nb)
        o = np.bincount(go[1], w[go[0]] * go[2], minlength=nb)
        tp = np.cumsum(h[::-1])[::-1][1:]
        fp = np.cumsum(o[::-1])[::-1][1:]
        fixed = cells @ w
        costs[r] = a * (fp + fixed[2]) + b * (h.sum() - tp + fixed[1])
    return choose_rows(costs, t, 2.0)


def interval(picked: np.ndarray) -> tuple[float, float]:
    return float(np.quantile(picked, 0.025)), float(np.quantile(picked, 0.975))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("db")
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--boots", default="200,1000")
    ap.add_argument("--policies", default="router,gap-only")
    ap.add_argument("--harness", help="only the sessions of this source_format")
    ap.add_argument("--costs", default="1,1", help="cost of an automatic prompt read as human, and of the reverse")
    args = ap.parse_args()
    con = connect(args.db)  # the stored cells are brought up to date first (written)
    where = "WHERE source_format = $h" if args.harness else ""
    params = {"h": args.harness} if args.harness else {}
    con.execute(
        f"CREATE OR REPLACE TEMP TABLE scope_sessions AS SELECT DISTINCT session_id FROM events {where}", params
    )
    t = thresholds_grid()
    cells = bins.load_cells(con, "none")
    if cells is None:
        sys.exit("no current sweep_bins in this database: run `stallscan report --db DB` first")
    a, b = (float(x) for x in args.costs.split(","))
    for policy in args.policies.split(","):
        _, rec, parts, n_sess, keys = point(cells, t, policy, "all", a, b)
        print(f"\n{policy}: {n_sess} sessions, {rec['n_gap_decided']} gap-decided prompts, set {rec['threshold']}")
        for n_boot in (int(b) for b in args.boots.split(",")):
            lows: dict[str, list[float]] = {"poisson": [], "multinomial": []}
            highs: dict[str, list[float]] = {"poisson": [], "multinomial": []}
            for seed in range(args.seeds):
                pois = interval(bootstrap.picks([parts], keys, t, a, b, n_boot, seed)[0])
                mult = interval(multinomial(parts, n_sess, t, n_boot, seed, a, b))
                for k, v in (("poisson", pois), ("multinomial", mult)):
                    lows[k].append(v[0])
                    highs[k].append(v[1])
                print(
                    f"  n_boot {n_boot:5d} seed {seed}: poisson [{pois[0]:.2f}, {pois[1]:.2f}]"
                    f"  multinomial [{mult[0]:.2f}, {mult[1]:.2f}]"
                )
            for k in lows:
                print(
                    f"  n_boot {n_boot:5d} {k:11s}: low {min(lows[k]):.2f}-{max(lows[k]):.2f} "
                    f"(median {np.median(lows[k]):.2f}), high {min(highs[k]):.2f}-{max(highs[k]):.2f} "
                    f"(median {np.median(highs[k]):.2f})"
                )


if __name__ == "__main__":
    main()
