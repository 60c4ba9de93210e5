"""The session bootstrap of the threshold sweep: one pass over the resamples, shared by every policy.

Resample r draws `n_sess` sessions with replacement (`rng.integers(0, n_sess, n_sess)`, one call per
resample) and weights each session by how often it was drawn. The recommended threshold of a resample is
chosen as for the whole corpus (stallscan.sweep.plateau.choose: the current threshold when it lies on a
minimum-cost run, else the nearest minimum-cost threshold) on

    cost = a * (FP_gap + FP_fixed) + b * (FN_gap + FN_fixed)

where the gap-decided counts come from per-(session, bin) counts of human and automatic events (one
weighted `bincount` over the pairs, then suffix sums over the bins), and the fixed counts from per-session
counts of the events no threshold changes (one matrix-vector product). A resample's weights are drawn once
and serve every policy of the group; policies with the same gap-decided pairs share their histograms.
Every count is an integer held exactly in float64, so each cost, and each pick, equals the one a loop per
policy computes (tests/unit/test_sweep_bootstrap.py holds them equal).

Measured on 10M generated events (166,667 sessions, 1,000 resamples, router only): 6.0 s, where a chunked
(sessions x resamples) matrix form took 14-16 s: with chunks bounded to 32 MiB it handled two resamples at
a time, and its gathers of 2-wide rows cost more than the per-resample bincounts they replaced.
"""

from __future__ import annotations

import numpy as np

from stallscan.replay.boundaries_ref import GAP_THRESHOLD_S
from stallscan.sweep.plateau import choose

Pairs = tuple[np.ndarray, np.ndarray, np.ndarray]  # (session index, bin, count), one entry per pair


def picks(
    policies: list[tuple[Pairs, Pairs, np.ndarray]],
    n_sess: int,
    t: np.ndarray,
    a: float,
    b: float,
    n_boot: int,
    seed: int,
    current: float = GAP_THRESHOLD_S,
) -> list[np.ndarray]:
    """Per policy (human pairs, automatic pairs, fixed (tp, fn, fp, tn) x sessions counts): the threshold
    each of the n_boot resamples recommends."""
    nb = len(t) + 1
    shared: dict[bytes, int] = {}  # identical gap-decided pairs -> one histogram per resample
    structs: list[tuple[Pairs, Pairs]] = []
    slot = []
    for gh, go, _ in policies:
        key = b"".join(np.ascontiguousarray(x).tobytes() + b"|" for x in (*gh, *go))
        if key not in shared:
            shared[key] = len(structs)
            structs.append(
                (
                    (gh[0], gh[1], np.asarray(gh[2], float)),
                    (go[0], go[1], np.asarray(go[2], float)),
                )
            )
        slot.append(shared[key])
    fixed_rows = np.vstack([cells[1:3] for _, _, cells in policies])  # (fn, fp) rows of every policy
    out = [np.empty(n_boot) for _ in policies]
    rng = np.random.default_rng(seed)
    for r in range(n_boot):
        w = np.bincount(rng.integers(0, n_sess, n_sess), minlength=n_sess).astype(float)
        sums = []
        for (hs, hb, hn), (os_, ob, on) in structs:
            h = np.bincount(hb, w[hs] * hn, minlength=nb)
            o = np.bincount(ob, w[os_] * on, minlength=nb)
            tp = np.cumsum(h[::-1])[::-1][1:]  # humans with bin > k, i.e. gap >= t[k]
            fp = np.cumsum(o[::-1])[::-1][1:]
            sums.append((fp, h.sum() - tp))
        fixed = fixed_rows @ w  # (fn, fp) of each policy
        for i in range(len(policies)):
            fp, fn = sums[slot[i]]
            cost = a * (fp + fixed[2 * i + 1]) + b * (fn + fixed[2 * i])
            out[i][r] = choose(cost, t, current)[0]
    return out
