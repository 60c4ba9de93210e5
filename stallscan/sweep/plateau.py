"""What to set, read off a cost curve: the optimal plateau, whether the current threshold lies on it, and
whether the corpus is large enough to recommend anything at all.

A cost curve over thresholds is usually flat near its minimum (on the real files the router's cost is the
same from 1.05 s to 3.80 s), so "the" lowest-cost threshold is a tie broken by position. The first argmin
told users to move a router that was already optimal. Here the choice is:

- the *plateau*: the contiguous run of grid thresholds whose cost equals the minimum (within float
  rounding), the one that holds the chosen threshold;
- the chosen threshold (`threshold`, the value to set): the current one when it lies on a minimum-cost
  run, else the minimum-cost grid threshold nearest to it (the smaller one on a tie), the least move
  that reaches the minimum;
- the bootstrap applies the same choice to every resample (stallscan.sweep.bootstrap), so its interval
  contains the current value whenever most resamples find it optimal.

Below a minimum of evidence the advice is "too few to recommend" and the value to set is the current
one; the constants say why.
"""

from __future__ import annotations

from typing import Any

import numpy as np

# The bootstrap resamples whole sessions: n sessions allow C(2n-1, n) distinct resamples (35 for 4, 126 for
# 5), so below 5 the interval's 2.5 % / 97.5 % quantiles are read off a few dozen outcomes.
MIN_SESSIONS = 5
# Only prompts the gap rule decides move with the threshold; below 20, a single prompt is more than 5 % of
# that evidence and one person's pause moves the plateau's edge.
MIN_GAP_PROMPTS = 20

KEEP, MOVE, TOO_FEW = "keep", "move", "too few to recommend"


def _tol(cost: np.ndarray) -> float:
    return 1e-9 * max(1.0, float(np.abs(cost).max()))


def choose(cost: np.ndarray, t: np.ndarray, current: float) -> tuple[float, float, float, bool]:
    """(threshold to set, plateau low, plateau high, current on the plateau) for one cost curve over the
    sorted grid `t` (non-empty)."""
    on = cost <= cost.min() + _tol(cost)
    # runs of consecutive minimum-cost grid points: [start, end] index pairs
    edges = np.flatnonzero(np.diff(np.concatenate(([0], on.astype(np.int8), [0]))))
    runs = edges.reshape(-1, 2) - [0, 1]
    lo_t, hi_t = t[runs[:, 0]], t[runs[:, 1]]
    tol = 1e-9 * max(1.0, abs(current))
    inside = np.flatnonzero((lo_t - tol <= current) & (current <= hi_t + tol))
    if len(inside):
        r = int(inside[0])
        return float(current), float(lo_t[r]), float(hi_t[r]), True
    idx = np.flatnonzero(on)
    k = int(idx[np.argmin(np.abs(t[idx] - current))])  # argmin: the smaller threshold on a tie
    r = int(np.flatnonzero((runs[:, 0] <= k) & (k <= runs[:, 1]))[0])
    return float(t[k]), float(lo_t[r]), float(hi_t[r]), False


def choose_rows(cost: np.ndarray, t: np.ndarray, current: float) -> np.ndarray:
    """`choose(row, t, current)[0]` for every row of `cost` (resamples x grid) at once: the current
    threshold when a minimum-cost run holds it, else the nearest minimum-cost grid threshold (the smaller
    on a tie). tests/unit/test_sweep_plateau.py holds it equal to choose, row for row."""
    tol_rows = 1e-9 * np.maximum(1.0, np.abs(cost).max(axis=1))
    on = cost <= cost.min(axis=1)[:, None] + tol_rows[:, None]
    return choose_on(on, t, current)


def choose_on(on: np.ndarray, t: np.ndarray, current: float) -> np.ndarray:
    """choose_rows from each row's minimum-cost grid points (`on`: resamples x grid, bool)."""
    tol = 1e-9 * max(1.0, abs(current))
    last_below = int(np.searchsorted(t - tol, current, side="right")) - 1  # last grid point with t - tol <= current
    first_above = int(np.searchsorted(t + tol, current, side="left"))  # first grid point with t + tol >= current
    if last_below < 0 or first_above >= len(t):
        inside: Any = np.zeros(len(on), bool)
    elif first_above <= last_below:  # grid points within tol of current: a run holding any of them holds it
        inside = on[:, first_above : last_below + 1].any(axis=1)
    else:  # current between two neighbours: one run must hold both
        inside = on[:, last_below] & on[:, first_above]
    nearest = t[np.argmin(np.where(on, np.abs(t - current), np.inf), axis=1)]  # argmin: the smaller on a tie
    out: np.ndarray = np.where(inside, float(current), nearest)
    return out


def enough(n_sessions: int, n_gap_prompts: int) -> bool:
    return n_sessions >= MIN_SESSIONS and n_gap_prompts >= MIN_GAP_PROMPTS


def advice(cost: np.ndarray, t: np.ndarray, current: float, n_sessions: int, n_gap_prompts: int) -> dict[str, Any]:
    """The recommendation's plateau fields: threshold (what to set), plateau, current, on_plateau, verdict."""
    chosen, lo, hi, on = choose(cost, t, current)
    if not enough(n_sessions, n_gap_prompts):
        verdict, chosen = TOO_FEW, float(current)
    else:
        verdict = KEEP if on else MOVE
    return {
        "threshold": chosen,
        "plateau": [lo, hi],
        "current": float(current),
        "on_plateau": on,
        "verdict": verdict,
        "sessions": n_sessions,
        "minimum": {"sessions": MIN_SESSIONS, "gap_prompts": MIN_GAP_PROMPTS},
    }
