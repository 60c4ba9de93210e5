"""The session bootstrap of the threshold sweep: per-session Poisson weights, per-resample sums, picks.

Resample b weights each session by a Poisson(1) count drawn from its own seed: the session's key (the low
64 bits of md5(session_id), `md5_number_lower` in DuckDB) mixed with (seed, b) by splitmix64, turned into
a uniform and read off the Poisson(1) CDF. A session's weights are therefore a function of the session
alone (not of which other sessions exist or their order), so a resample's sums are sums of per-session
contributions: adding, replacing or removing a session adds or subtracts its own cells' part and leaves
the rest (stallscan.sweep.boot keeps the sums of the whole corpus in table `sweep_boot`). The Poisson
scheme is the usual stand-in for the multinomial (n draws with replacement): each session's count is
Poisson(1) instead of Binomial(n, 1/n), and the resample's size varies around n (docs/sweep.md, "The
bootstrap").

Per policy the sums of resample b are, for the gap-decided events, the weighted counts of humans and of
automatic events per gap bin (H and O, n_boot x bins) and, for the events no threshold changes, the
weighted fixed (fn, fp) counts (F, n_boot x 2). The recommended threshold of a resample is chosen from its
sums as for the whole corpus (stallscan.sweep.plateau.choose) on

    cost = a * (FP_gap + FP_fixed) + b * (FN_gap + FN_fixed)

Every sum is an integer (int64), so the sums do not depend on the order sessions were added in, and an
incremental update equals a build from scratch exactly.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise

import numpy as np

from stallscan.replay.boundaries_ref import GAP_THRESHOLD_S
from stallscan.store.db import threads
from stallscan.sweep.plateau import choose_on, choose_rows

Pairs = tuple[np.ndarray, np.ndarray, np.ndarray]  # (session index, bin, count), one entry per pair
Parts = tuple[Pairs, Pairs, np.ndarray]  # human pairs, automatic pairs, fixed (tp, fn, fp, tn) x sessions

_M64 = np.uint64(0xFFFFFFFFFFFFFFFF)
_POISSON_MAX = 24  # P(Poisson(1) > 24) < 1e-25: never reached by a 53-bit uniform
_STEPS = 6  # CDF steps weights() compares against directly
_AT_ONCE = 1 << 18  # sums_many draws every weight at once up to this many (sessions or pairs x resamples)


def _cdf() -> np.ndarray:
    p = np.exp(-1.0) / np.cumprod(np.concatenate(([1.0], np.arange(1, _POISSON_MAX + 1, dtype=float))))
    c = np.cumsum(p)
    c[-1] = 2.0  # every uniform in [0, 1) falls at or below the last step
    return c


_CDF = _cdf()
# _draw's first _STEPS CDF comparisons on the mixed 64-bit value itself: f = (x >> 11) * 2**-53 >= c holds iff
# x >> 11 >= ceil(c * 2**53) (an integer) iff x >= ceil(c * 2**53) << 11, so no shift, conversion or multiply
_STEPS_X = np.array([int(np.ceil(c * float(1 << 53))) << 11 for c in _CDF[:_STEPS]], dtype=np.uint64)


def _mix(x: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser over uint64 (wrapping arithmetic); a new array (x is not changed), its steps done
    in place on it with one scratch array."""
    x = x + np.uint64(0x9E3779B97F4A7C15)
    t = np.empty_like(x)
    for shift, mult in ((30, 0xBF58476D1CE4E5B9), (27, 0x94D049BB133111EB)):
        np.right_shift(x, np.uint64(shift), out=t)
        np.bitwise_xor(x, t, out=x)
        np.multiply(x, np.uint64(mult), out=x)
    np.right_shift(x, np.uint64(31), out=t)
    out: np.ndarray = np.bitwise_xor(x, t, out=x)
    return out


def _resample_mix(n_boot: int, seed: int) -> np.ndarray:
    with np.errstate(over="ignore"):
        return _mix(np.arange(n_boot, dtype=np.uint64) ^ _mix(np.array([seed], dtype=np.uint64) & _M64))


def _draw(k: np.ndarray, r: np.ndarray) -> np.ndarray:
    """Poisson(1) counts (int64) of keys k in resamples r (broadcast): a uniform f from splitmix64(k ^ r) (its
    53 high bits, times 2**-53) read off the CDF."""
    with np.errstate(over="ignore"):
        x = _mix(k ^ r)
    # searchsorted(_CDF, f, "right") counts the CDF steps at or below f: the first _STEPS by comparisons into
    # a uint8 count (a third of searchsorted's time), made on x itself (_STEPS_X), the rare f past them
    # (P < 0.0006) by searchsorted
    n = np.zeros(x.shape, np.uint8)
    ge = np.empty(x.shape, np.bool_)
    for step in _STEPS_X:
        np.greater_equal(x, step, out=ge)
        n += ge.view(np.uint8)
    w: np.ndarray = n.astype(np.int64)
    far = ge  # f >= _CDF[_STEPS - 1]
    if far.any():
        w[far] = np.searchsorted(_CDF, (x[far] >> np.uint64(11)) * (1.0 / (1 << 53)), side="right")
    return w


def weights(keys: np.ndarray, n_boot: int, seed: int) -> np.ndarray:
    """(len(keys), n_boot) Poisson(1) weights (int64): session i's weight in resample b depends only on
    (keys[i], b, seed)."""
    k = np.asarray(keys, dtype=np.uint64)
    return _draw(k[:, None], _resample_mix(n_boot, seed)[None, :])


def index_keys(sess: np.ndarray) -> np.ndarray:
    """Keys for cells that carry no session key (hand-built cells): the dense session index, mixed."""
    with np.errstate(over="ignore"):
        return _mix(np.asarray(sess, dtype=np.uint64) ^ np.uint64(0x5EED))


@dataclass
class Sums:
    """Per-resample sums of one policy: H, O (n_boot x bins) and F (n_boot x 2: fn, fp), int64."""

    h: np.ndarray
    o: np.ndarray
    f: np.ndarray

    def __add__(self, other: Sums) -> Sums:
        return Sums(self.h + other.h, self.o + other.o, self.f + other.f)


def sums(parts: Parts, keys: np.ndarray, nb: int, n_boot: int, seed: int) -> Sums:
    """The per-resample sums of one policy's parts over its sessions (keys[i]: session i's key)."""
    return sums_many([parts], keys, nb, n_boot, seed)[0]


def sums_many(policies: list[Parts], keys: np.ndarray, nb: int, n_boot: int, seed: int) -> list[Sums]:
    """sums() of each policy over the same sessions: one pass over the resamples, each resample's weights
    drawn once for every policy, then one weighted bincount per policy and kind over its (session, bin)
    pairs and one matrix-vector product for the fixed counts. The weighted counts are integers held exactly
    in float64 (far below 2**53), so they convert to the int64 sums exactly. The resamples are independent,
    so they are shared out over worker threads in contiguous ranges (numpy releases the GIL in the draws and
    the bincounts); each resample's sums are the same whichever thread computes them."""
    k = np.asarray(keys, dtype=np.uint64)
    rs = _resample_mix(n_boot, seed)
    widest = max([len(gh[0]) + len(go[0]) for gh, go, _ in policies], default=0)
    if max(len(k), widest) * n_boot <= _AT_ONCE:
        return _sums_at_once(policies, k, rs, nb)
    used = _used_sessions(policies)
    prepared = [_Prepared(p, used) for p in policies]
    k = k[used]
    out = [(np.zeros((n_boot, nb)), np.zeros((n_boot, nb)), np.zeros((n_boot, 2))) for _ in policies]
    workers = min(threads(), n_boot, max(1, (len(k) + widest) * n_boot // _PER_WORKER))
    # (more ranges than workers, taken in turn: a thread that shares its CPU with other work, such as the sweep's
    # count of the tool results left out, core.run_sweep, does fewer ranges instead of holding up the last one)
    cuts = np.linspace(0, n_boot, (workers if workers == 1 else min(n_boot, workers * _RANGES)) + 1).astype(int)
    ranges = [range(int(lo), int(hi)) for lo, hi in pairwise(cuts)]
    if workers == 1:
        _sums_range(ranges[0], k, rs, prepared, out)
    else:
        from concurrent.futures import ThreadPoolExecutor  # (only here: its import, with logging's, some 2.5 ms)

        with ThreadPoolExecutor(workers) as pool:
            for done in [pool.submit(_sums_range, rr, k, rs, prepared, out) for rr in ranges]:
                done.result()
    return [Sums(*(np.rint(x).astype(np.int64) for x in sums3)) for sums3 in out]


_PER_WORKER = 1 << 24  # (sessions + pairs) x resamples below which one thread does the whole loop
_RANGES = 8  # ranges of resamples per worker thread
# keys _Draws mixes at a time: its scratch arrays stay in the L2 cache (10M bench: the mix 0.64 -> 0.47 ms a resample)
_CHUNK = 1 << 16


def _top_counts() -> np.ndarray:
    """Per value of a mixed 64-bit x's top 16 bits: x's count of _STEPS_X steps when those bits decide it, else 255
    (the bits equal a step's, or x is past the last step: the exact path). u < a step's top bits: x < the step;
    u > them: x >= the step."""
    top = (_STEPS_X >> np.uint64(48)).astype(np.int64)  # (distinct: the steps are 0.003 or more apart)
    lut = np.zeros(1 << 16, np.uint8)
    for s in top:
        lut[s + 1 :] += 1
    lut[top] = 255
    lut[top[-1] :] = 255
    return lut


_TOP_COUNTS = _top_counts()


class _Draws:
    """_draw(k, r) for one key array and many resamples r, into scratch arrays made once: the steps of _mix in
    place on chunks of _CHUNK keys, and the CDF count read off a 65,536-entry table by x's top 16 bits (two
    passes instead of twelve comparisons and additions); the few x the table does not decide (P about 0.0007)
    by searchsorted, as _draw does past its steps. The same float64 weights as _draw(k, r).astype(float)."""

    def __init__(self, k: np.ndarray) -> None:
        self.k = k
        self.x = np.empty(len(k), np.uint64)
        self.t = np.empty(len(k), np.uint64)
        self.n = np.empty(len(k), np.uint8)
        self.w = np.empty(len(k), np.float64)

    def __call__(self, r: np.uint64) -> np.ndarray:
        with np.errstate(over="ignore"):
            self._mixed(r)
        odd = np.flatnonzero(self.n == 255)
        if len(odd):
            x = self.x[odd]
            x ^= x >> _S31  # (the mix's last step, which _mixed leaves out: see there)
            self.w[odd] = np.searchsorted(_CDF, (x >> np.uint64(11)) * (1.0 / (1 << 53)), side="right")
        return self.w

    def _mixed(self, r: np.uint64) -> None:
        for lo in range(0, len(self.k), _CHUNK):
            hi = lo + _CHUNK
            x, t = self.x[lo:hi], self.t[lo:hi]
            np.bitwise_xor(self.k[lo:hi], r, out=x)
            np.add(x, _GOLDEN, out=x)
            for shift, mult in _MIX_STEPS:
                np.right_shift(x, shift, out=t)
                np.bitwise_xor(x, t, out=x)
                np.multiply(x, mult, out=x)
            # (the mix's last step, x ^= x >> 31, leaves x's top 16 bits as they are, and only they are read here:
            # it is done on the few x past the table alone, in __call__; two passes of eleven fewer a resample)
            np.right_shift(x, _S48, out=t)
            np.take(_TOP_COUNTS, t.view(np.int64), out=self.n[lo:hi], mode="clip")
            np.copyto(self.w[lo:hi], self.n[lo:hi], casting="unsafe")


_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX_STEPS = ((np.uint64(30), np.uint64(0xBF58476D1CE4E5B9)), (np.uint64(27), np.uint64(0x94D049BB133111EB)))
_S31, _S48 = np.uint64(31), np.uint64(48)


class _Prepared:
    """One policy's pairs and fixed counts as the per-resample loop reads them. Each kind's pairs sorted by bin,
    so that a resample's sums are one gather of the pairs' weights (np.take into a buffer) and one
    np.add.reduceat over each bin's run (at 10M events 0.91 against 1.13 ms a resample for a fancy-index gather
    and a bincount); every pair counted once there, and the pairs counted more than once added again with
    their count less one (1 % of the pairs: a multiply over every pair was a sixth of a resample's time). The
    fixed (fn, fp) counts of the sessions that have any (most sessions have none)."""

    def __init__(self, parts: Parts, used: np.ndarray) -> None:
        self.pairs = []
        # (a session's place in `used`: a lookup, not a binary search per pair; every session read is in it)
        place = np.zeros(int(used[-1]) + 1 if len(used) else 0, np.intp)
        place[used] = np.arange(len(used))
        for sess, b, n in parts[:2]:
            b = np.asarray(b).astype(np.intp)
            # (the bins fit 16 bits on any grid a sweep runs: numpy's stable sort of uint16 is a radix sort, the
            # same order as over intp in a tenth of the time)
            order = np.argsort(b.astype(np.uint16) if len(b) and b.max() < 1 << 16 else b, kind="stable")
            s = place[np.asarray(sess, np.int64)[order]]
            bo = b[order]
            first = np.flatnonzero(np.concatenate(([True], bo[1:] != bo[:-1]))) if len(bo) else np.zeros(0, np.intp)
            bins = bo[first]
            cnt = np.asarray(n, dtype=float)[order]
            more = np.flatnonzero(cnt != 1)
            self.pairs.append((s, bins, first, s[more], bo[more], cnt[more] - 1))
        fixed = np.asarray(parts[2][1:3], dtype=float)  # (fn, fp) x sessions
        nz = np.flatnonzero(fixed.any(axis=0)) if fixed.size else np.zeros(0, np.intp)
        self.fixed_sess = place[nz]
        self.fixed = fixed[:, nz]


def _used_sessions(policies: list[Parts]) -> np.ndarray:
    """The sessions any policy's sums read (a pair, or a fixed fn / fp count): the others' weights are not drawn."""
    out = []
    for gh, go, cells in policies:
        out += [np.asarray(gh[0], np.int64), np.asarray(go[0], np.int64)]
        fixed = np.asarray(cells[1:3])
        if fixed.size:
            out.append(np.flatnonzero(fixed.any(axis=0)).astype(np.int64))
    every = np.concatenate(out) if out else np.zeros(0, np.int64)
    if not len(every):
        return every
    # (np.unique's sorted distinct indices, by marking them: no sort of the 536,184 pairs at 10M generated events)
    seen = np.zeros(int(every.max()) + 1, bool)
    seen[every] = True
    return np.flatnonzero(seen).astype(np.int64)


def _sums_range(
    rr: range,
    k: np.ndarray,
    rs: np.ndarray,
    prepared: list[_Prepared],
    out: list[tuple[np.ndarray, np.ndarray, np.ndarray]],
) -> None:
    """The sums of resamples rr into their rows of `out` (k: the keys of the sessions read)."""
    draw = _Draws(k)
    gathered = [[np.empty(len(pairs[0])) for pairs in p.pairs] for p in prepared]  # (this thread's buffers)
    for r in rr:
        w = draw(rs[r])
        for p, (h, o, f), bufs in zip(prepared, out, gathered):
            for (sess, bins, first, s2, b2, c2), into, g in zip(p.pairs, (h, o), bufs):
                if len(sess):
                    into[r, bins] = np.add.reduceat(np.take(w, sess, out=g, mode="clip"), first)
                if len(s2):
                    into[r] += np.bincount(b2, w[s2] * c2, minlength=into.shape[1])
            f[r] = p.fixed @ w[p.fixed_sess]


def _sums_at_once(policies: list[Parts], k: np.ndarray, rs: np.ndarray, nb: int) -> list[Sums]:
    """sums_many() for few sessions (a one-session change, stallscan.sweep.boot.merge): every weight drawn at
    once as a (sessions x resamples) matrix, each pair's weighted counts as a row, the rows summed per bin,
    instead of one pass per resample. The same integer sums (every term is an integer held exactly)."""
    w = _draw(k[:, None], rs[None, :]).astype(float)  # (sessions, n_boot): the loop's draws, all at once
    out = []
    for gh, go, cells in policies:
        binned = []
        for sess, b, n in (gh, go):
            order = np.argsort(b, kind="stable")
            bins, first = np.unique(np.asarray(b)[order], return_index=True)
            weighted = w[np.asarray(sess)[order]] * np.asarray(n, float)[order, None]  # (pairs, n_boot)
            sums = np.zeros((nb, len(rs)))
            if len(order):
                sums[bins] = np.add.reduceat(weighted, first, axis=0)  # each bin's pairs summed
            binned.append(sums.T)
        fixed = (np.asarray(cells[1:3], dtype=float) @ w).T  # (fn, fp) per resample
        out.append(Sums(*(np.rint(x).astype(np.int64) for x in (binned[0], binned[1], fixed))))
    return out


def picks_from_sums(s: Sums, t: np.ndarray, a: float, b: float, current: float = GAP_THRESHOLD_S) -> np.ndarray:
    """The threshold each resample recommends, from its sums. With whole-number costs (the report's 1 and 1)
    the cost is an integer: a * fp - b * tp is one suffix sum of a * O - b * H over the bins, plus a
    constant per resample, in int64 (the same values as the float arithmetic below, which is exact on
    integers this small: every term is far below 2**53)."""
    if float(a).is_integer() and float(b).is_integer() and max(abs(a), abs(b)) <= 1 << 20:
        ia, ib = int(a), int(b)
        on = _on_integer(s, ia, ib)
        if on is not None:
            return choose_on(on, t, current)
        d = ia * s.o - ib * s.h
        # cost[k] = a * (fp[k] + F_fp) + b * (fn[k] + F_fn), fn[k] = sum(H) - tp[k]
        rest = ib * s.h.sum(axis=1) + ia * s.f[:, 1] + ib * s.f[:, 0]
        whole = np.cumsum(d[:, ::-1], axis=1)[:, ::-1][:, 1:] + rest[:, None]
        return choose_rows(whole.astype(float), t, current)
    h, o = s.h.astype(float), s.o.astype(float)
    tp = np.cumsum(h[:, ::-1], axis=1)[:, ::-1][:, 1:]  # humans with bin > k, i.e. gap >= t[k]
    fp = np.cumsum(o[:, ::-1], axis=1)[:, ::-1][:, 1:]
    fn = h.sum(axis=1)[:, None] - tp
    cost = a * (fp + s.f[:, 1:2]) + b * (fn + s.f[:, 0:1])
    return choose_rows(cost, t, current)


# below this, choose_rows' tolerance (1e-9 of the curve's largest absolute cost, at least 1e-9) is under 1: on an
# integer cost curve its minimum-cost points are those equal to the minimum
_EXACT_BELOW = 10**9


def _on_integer(s: Sums, ia: int, ib: int) -> np.ndarray | None:
    """Each resample's minimum-cost grid points (choose_rows' `on`) for whole-number costs, in int64, or None when
    a cost may reach _EXACT_BELOW (the float path then decides as before). The cost at grid point k is
    K - c[k], c the prefix sums of ia * O - ib * H over the bins and K = the total of those plus the per-resample
    constant (fn and fp fixed, every human a false negative): its minimum is where c is largest, and the
    largest absolute cost is at c's smallest or largest value. One subtraction and one cumulative sum in place:
    the reversed suffix sums, the constant added and the float copy cost 13 CPU ms per policy at 1,000
    resamples x 602 bins, this about a third of that."""
    if s.h.shape[1] < 2 or {s.h.dtype.kind, s.o.dtype.kind, s.f.dtype.kind} != {"i"}:  # (no grid point; not int)
        return None
    d = np.subtract(s.o, s.h) if ia == ib == 1 else ia * s.o - ib * s.h
    np.cumsum(d, axis=1, out=d)
    total = d[:, -1].copy()
    c = d[:, :-1]
    hi, lo = c.max(axis=1), c.min(axis=1)
    k = ib * s.h.sum(axis=1) + ia * s.f[:, 1] + ib * s.f[:, 0] + total
    if max(int(np.abs(k - hi).max()), int(np.abs(k - lo).max())) >= _EXACT_BELOW:
        return None
    on: np.ndarray = c == hi[:, None]
    return on


def picks(
    policies: list[Parts],
    keys: np.ndarray,
    t: np.ndarray,
    a: float,
    b: float,
    n_boot: int,
    seed: int,
    current: float = GAP_THRESHOLD_S,
) -> list[np.ndarray]:
    """Per policy (human pairs, automatic pairs, fixed (tp, fn, fp, tn) x sessions counts): the threshold
    each of the n_boot resamples recommends."""
    return [picks_from_sums(s, t, a, b, current) for s in sums_many(policies, keys, len(t) + 1, n_boot, seed)]
