"""The session bootstrap of the threshold sweep, as matrix operations over chunks of resamples.

Resample r draws `n_sess` sessions with replacement (`rng.integers(0, n_sess, n_sess)`, one call per
resample, so the random stream is the one the earlier per-resample loop drew) and weights each session by
how often it was drawn. The recommended threshold of a resample is the first argmin over thresholds of

    cost = a * (FP_gap + FP_fixed) + b * (FN_gap + FN_fixed)

where the gap-decided counts come from per-(session, bin) counts of human and automatic events, and the
fixed counts from per-session counts of the events no threshold changes. For a chunk of resamples the
weights are a (sessions x resamples) matrix W; the per-bin sums are one gather of W's rows at the pairs'
sessions and one `add.reduceat` over the pairs sorted by bin; the fixed counts are one matrix product.
Every count is an integer held exactly in float64, so each cost equals, bit for bit, the one the loop
computed, and so does every pick (tests/test_sweep_bootstrap.py holds them equal). Policies with the same
gap-decided pairs share their histograms; every policy of a group shares the weights.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

Pairs = tuple[np.ndarray, np.ndarray, np.ndarray]  # (session index, bin, count), one entry per pair
ByBin = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]  # pairs sorted by bin (see _by_bin)
BUDGET = 1 << 22  # floats per work matrix (32 MiB): bounds the resamples handled per chunk


def weights(n_sess: int, n_boot: int, seed: int, chunk: int) -> Iterator[np.ndarray]:
    """(sessions x resamples) weight matrices of at most `chunk` resamples each, in resample order."""
    rng = np.random.default_rng(seed)
    for start in range(0, n_boot, chunk):
        rc = min(chunk, n_boot - start)
        draws = np.stack([rng.integers(0, n_sess, n_sess) for _ in range(rc)])  # the loop's random stream
        flat = (draws * rc + np.arange(rc)[:, None]).ravel()  # session-major: row s = session s's weights
        yield np.bincount(flat, minlength=n_sess * rc).reshape(n_sess, rc).astype(float)


def _by_bin(pairs: Pairs) -> ByBin:
    """Pairs sorted by bin, with the start of each bin's run and the bins that have one."""
    sess, bins, n = pairs
    order = np.argsort(bins, kind="stable")
    sess, bins, n = sess[order], bins[order], np.asarray(n, float)[order]
    starts = np.flatnonzero(np.r_[True, bins[1:] != bins[:-1]]) if len(bins) else np.zeros(0, int)
    return sess, n, starts, bins[starts]


def _hist(sorted_pairs: ByBin, w: np.ndarray, nb: int) -> np.ndarray:
    """(bins x resamples): the weighted count of each bin under each resample's session weights."""
    sess, n, starts, present = sorted_pairs
    out = np.zeros((nb, w.shape[1]))
    if len(sess):
        out[present] = np.add.reduceat(w[sess] * n[:, None], starts, axis=0)
    return out


def picks(
    policies: list[tuple[Pairs, Pairs, np.ndarray]],
    n_sess: int,
    t: np.ndarray,
    a: float,
    b: float,
    n_boot: int,
    seed: int,
) -> list[np.ndarray]:
    """Per policy (human pairs, automatic pairs, fixed (tp, fn, fp, tn) x sessions counts): the threshold
    each of the n_boot resamples recommends."""
    nb = len(t) + 1
    shared: dict[bytes, int] = {}  # identical gap-decided pairs -> one histogram
    structs: list[tuple[ByBin, ByBin]] = []
    slot = []
    for gh, go, _ in policies:
        key = b"".join(np.ascontiguousarray(x).tobytes() + b"|" for x in (*gh, *go))
        if key not in shared:
            shared[key] = len(structs)
            structs.append((_by_bin(gh), _by_bin(go)))
        slot.append(shared[key])
    widest = max([n_sess] + [len(s[0][0]) + len(s[1][0]) for s in structs])
    chunk = max(1, min(n_boot, BUDGET // max(widest, 1)))
    out = [np.empty(n_boot) for _ in policies]
    # the fixed FN and FP rows of every policy, weighted in one pass per chunk (einsum's own loop: a BLAS
    # product of this shape spun its threads for 40x longer on the shared 2-CPU machine)
    fixed_rows = np.vstack([cells[1:3] for _, _, cells in policies])
    done = 0
    for w in weights(n_sess, n_boot, seed, chunk):
        rc = w.shape[1]
        sums = []
        for h_pairs, o_pairs in structs:
            h, o = _hist(h_pairs, w, nb), _hist(o_pairs, w, nb)
            tp = np.cumsum(h[::-1], axis=0)[::-1][1:]  # humans with bin > k, i.e. gap >= t[k]
            fp = np.cumsum(o[::-1], axis=0)[::-1][1:]
            sums.append((fp, h.sum(axis=0) - tp))
        fixed = np.einsum("ks,sr->kr", fixed_rows, w)  # (fn, fp) of each policy x resamples
        for i in range(len(policies)):
            fp, fn = sums[slot[i]]
            cost = a * (fp + fixed[2 * i + 1]) + b * (fn + fixed[2 * i])
            out[i][done : done + rc] = t[np.argmin(cost, axis=0)]
        done += rc
    return out
