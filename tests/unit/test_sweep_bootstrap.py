"""The bootstrap (stallscan.sweep.bootstrap: per-session Poisson weights, per-resample sums in chunks) picks,
resample for resample, the threshold a plain loop per policy picks: same weights, same costs bit for bit,
same choice on the minimum-cost plateau. The weights are Poisson(1) and a session's depend on its key alone."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stallscan.replay.boundary_variants import VARIANTS
from stallscan.sweep import bootstrap, plateau
from stallscan.sweep.cells import sweep_cells
from stallscan.sweep.core import _fill_sums, sweep_from_cells
from stallscan.sweep.point import point, sweep_one


def loop_picks(parts, keys, t, a, b, n_boot, seed):
    """The reference: one policy, one resample at a time, one session's weights at a time."""
    (gh, go, cells), nb = parts, len(t) + 1
    ws = np.array([bootstrap.weights(np.array([k], np.uint64), n_boot, seed)[0] for k in keys], float)
    out = np.empty(n_boot)
    for r in range(n_boot):
        w = ws[:, r]
        h = np.bincount(gh[1], w[gh[0]] * gh[2], minlength=nb)
        o = np.bincount(go[1], w[go[0]] * go[2], minlength=nb)
        tp = np.cumsum(h[::-1])[::-1][1:]
        fp = np.cumsum(o[::-1])[::-1][1:]
        fixed = cells @ w
        cost = a * (fp + fixed[2]) + b * (h.sum() - tp + fixed[1])
        low = np.flatnonzero(cost <= cost.min() + 1e-9 * max(1.0, np.abs(cost).max()))  # equal within rounding
        on = [k for k in low if t[k] == 2.0]  # the current threshold when it costs the minimum, else the nearest
        out[r] = t[on[0]] if on else t[low[np.argmin(np.abs(t[low] - 2.0))]]
    return out


def _rows(draw_rows):
    n = len(draw_rows)
    return {
        "human": np.array([r[0] for r in draw_rows]),
        "decided_by": np.array([r[1] for r in draw_rows], dtype=object),
        "decided_human": np.array([r[2] for r in draw_rows]),
        "gap_s": np.array([r[3] for r in draw_rows], dtype=float),
        "first_in_session": np.array([r[4] for r in draw_rows]),
        "session_id": np.array([f"s{r[5]:02d}" for r in draw_rows], dtype=object),
        "grp": np.array(["all"] * n, dtype=object),
    }


row = st.tuples(
    st.booleans(),
    st.sampled_from(["gap", "gap", "header", "completion", "first"]),
    st.booleans(),
    st.floats(0, 12, allow_nan=False).map(lambda x: round(x, 1)),
    st.booleans(),
    st.integers(0, 30),
)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(row, min_size=2, max_size=120),
    st.sampled_from([(1.0, 1.0), (1.0, 3.0), (0.1, 0.7), (2.5, 1.0)]),
    st.integers(0, 3),
    st.booleans(),  # a repeated policy: its histograms are shared
)
def test_shared_bootstrap_equals_a_loop_per_policy(rows_list, costs, seed, repeat):
    rows = _rows(rows_list)
    t = np.array([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 5.0, 8.0, 11.9])
    a, b = costs
    names = ("router", "gap-only", "router") if repeat else ("router", "gap-only")
    parts = [point(rows, t, p, "all", a, b) for p in names]
    n_sess, keys = parts[0][3], parts[0][4]
    if n_sess < 2:
        return
    got = bootstrap.picks([p[2] for p in parts], keys, t, a, b, 37, seed)
    for p, g in zip(parts, got):
        assert np.array_equal(g, loop_picks(p[2], keys, t, a, b, 37, seed))


def test_weights_are_poisson_one_and_per_session():
    keys = np.arange(4000, dtype=np.uint64) * np.uint64(2654435761)
    w = bootstrap.weights(keys, 250, 0)
    # Poisson(1): mean 1, variance 1, P(0) = P(1) = 1/e, P(2) = 1/(2e); 1M draws put each within 0.01
    assert abs(w.mean() - 1) < 0.01 and abs(w.var() - 1) < 0.01
    for k, p in ((0, np.exp(-1)), (1, np.exp(-1)), (2, np.exp(-1) / 2), (3, np.exp(-1) / 6)):
        assert abs((w == k).mean() - p) < 0.005
    # a session's weights do not depend on the other sessions or their order
    assert np.array_equal(bootstrap.weights(keys[::-7], 250, 0), w[::-7])
    # another seed, other weights; resamples are not copies of each other
    assert not np.array_equal(bootstrap.weights(keys, 250, 1), w)
    assert abs(np.corrcoef(w[:, 0], w[:, 1])[0, 1]) < 0.05


@pytest.mark.parametrize("at_once", [0, 1 << 30], ids=["per-resample", "all-at-once"])
def test_sums_add_up_over_sessions(at_once, monkeypatch):
    """The sums of two disjoint sets of sessions add to the sums of their union (what table sweep_boot's
    incremental update relies on), in any chunking, whether sums_many passes over the resamples one by one
    (many sessions) or draws every weight at once (few: a one-session change)."""
    monkeypatch.setattr(bootstrap, "_AT_ONCE", at_once)
    rng = np.random.default_rng(3)
    n, nb = 50, 7
    sess = np.sort(rng.integers(0, n, 400))
    bins, cnt = rng.integers(0, nb, 400), rng.integers(1, 4, 400).astype(float)
    keys = rng.integers(0, 2**63, n).astype(np.uint64)
    fixed = rng.integers(0, 5, (4, n)).astype(float)

    def part(lo, hi):
        m = (sess >= lo) & (sess < hi)
        pairs = (sess[m] - lo, bins[m], cnt[m])
        return bootstrap.sums((pairs, pairs, fixed[:, lo:hi]), keys[lo:hi], nb, 30, 5)

    whole, left, right = part(0, n), part(0, 20), part(20, n)
    both = left + right
    for x, y in ((whole.h, both.h), (whole.o, both.o), (whole.f, both.f)):
        assert np.array_equal(x, y)
    w = bootstrap.weights(keys, 30, 5)
    expect = np.zeros((30, nb))
    for s, b_, c in zip(sess, bins, cnt):  # plain loop over the pairs
        expect[:, b_] += w[s] * c
    assert np.array_equal(whole.h, expect) and np.array_equal(whole.f, (fixed[1:3] @ w).T)


def test_the_two_ways_of_summing_agree_with_pairs_in_any_order():
    """sums_many per resample and all at once: equal int64 sums, pairs unsorted, bins left empty, a session
    with no pairs, several policies."""
    rng = np.random.default_rng(11)
    n, nb, n_boot = 9, 12, 64
    keys = rng.integers(0, 2**63, n).astype(np.uint64)

    def pairs(m):
        return rng.integers(0, n - 1, m), rng.integers(0, nb // 2, m) * 2, rng.integers(1, 6, m)

    policies = [(pairs(40), pairs(25), rng.integers(0, 5, (4, n))), (pairs(0), pairs(3), np.zeros((4, n)))]
    rs = bootstrap._resample_mix(n_boot, 4)
    once = bootstrap._sums_at_once(policies, keys, rs, nb)
    saved = bootstrap._AT_ONCE
    try:
        bootstrap._AT_ONCE = 0
        looped = bootstrap.sums_many(policies, keys, nb, n_boot, 4)
    finally:
        bootstrap._AT_ONCE = saved
    for x, y in zip(once, looped):
        assert x.h.dtype == np.int64 and x.h.shape == (n_boot, nb)
        assert np.array_equal(x.h, y.h) and np.array_equal(x.o, y.o) and np.array_equal(x.f, y.f)
    assert not once[1].h.any() and once[0].h[:, 1::2].sum() == 0 and once[0].h.sum() > 0


def test_policies_with_the_same_decisions_share_sums_and_keep_their_own_intervals():
    """A rule variant that decides every event as the router does shares the router's bootstrap sums (computed
    once); every policy's interval still equals the one its own bootstrap gives (one policy at a time)."""
    rng = np.random.default_rng(7)
    n = 400
    rows = {
        "human": rng.random(n) < 0.4,
        "decided_by": rng.choice(np.array(["gap", "gap", "header", "completion", "first"], dtype=object), n),
        "decided_human": rng.random(n) < 0.5,
        "gap_s": np.round(rng.random(n) * 12, 1),
        "first_in_session": rng.random(n) < 0.1,
        "session_id": np.array([f"s{i:03d}" for i in rng.integers(0, 60, n)], dtype=object),
        "grp": np.array(["all"] * n, dtype=object),
    }
    notif = np.where(rng.random(n) < 0.3, "notification", rows["decided_by"])
    rows |= {
        "marker_decided_by": rows["decided_by"].copy(),  # the router's decisions, row for row
        "marker_decided_human": rows["decided_human"].copy(),
        "notif_decided_by": notif,
        "notif_decided_human": np.where(notif == "notification", False, rows["decided_human"]),
        "both_decided_by": notif.copy(),  # the same decisions as notif
        "both_decided_human": np.where(notif == "notification", False, rows["decided_human"]),
    }
    t = np.array([0.0, 0.5, 1.0, 2.0, 3.0, 5.0, 8.0])
    policies = ("router", *VARIANTS)
    res = sweep_from_cells(sweep_cells(rows, t), t, 1.0, 2.0, "none", policies, 37, 3)
    for p in policies:
        alone = sweep_one(rows, t, p, "all", 1.0, 2.0, 37, 3)[1]
        assert res.recommendation[(p, "all")]["interval"] == alone["interval"], p
        assert res.recommendation[(p, "all")]["bootstrap"] == 37
    keep: dict[str, bootstrap.Sums] = {}
    parts = [(p, *point(rows, t, p, "all", 1.0, 2.0)[2:5:2]) for p in policies]
    _fill_sums(keep, [(p, x, k) for p, x, k in parts], len(t) + 1, 37, 3)
    assert keep["marker-aware"] is keep["router"] and keep["marker+notification"] is keep["notification-aware"]
    assert keep["router"] is not keep["notification-aware"]
    assert not np.array_equal(keep["router"].h, keep["notification-aware"].h)


@pytest.mark.parametrize("a, b", [(1.0, 1.0), (1.0, 3.0), (2.0, 1.0), (0.1, 0.7)])
def test_picks_from_sums_read_the_cost_formula(a, b):
    """Each resample's pick is the plateau choice on a * (FP + fixed fp) + b * (FN + fixed fn), FN = the
    humans at or below the threshold's bin (whole-number costs take an integer path: the same picks)."""
    rng = np.random.default_rng(7)
    t = np.round(np.arange(0, 3.01, 0.25), 10)
    n_boot, nb = 200, len(t) + 1
    s = bootstrap.Sums(
        rng.integers(0, 6, (n_boot, nb)), rng.integers(0, 6, (n_boot, nb)), rng.integers(0, 9, (n_boot, 2))
    )
    want = np.empty(n_boot)
    for r in range(n_boot):
        h, o, (fn0, fp0) = s.h[r].astype(float), s.o[r].astype(float), s.f[r]
        fp = np.array([o[k + 1 :].sum() for k in range(len(t))])
        fn = np.array([h[: k + 1].sum() for k in range(len(t))])
        cost = a * (fp + fp0) + b * (fn + fn0)
        want[r] = plateau.choose(cost, t, 2.0)[0]
    assert np.array_equal(bootstrap.picks_from_sums(s, t, a, b, 2.0), want)


def test_each_group_of_a_grouped_sweep_equals_its_own_sweep():
    """By harness, a group's recommendation (its session count, plateau advice, whether it has a bootstrap
    interval) is the one a sweep of that group's rows alone gives, whatever group came before it: here a
    one-session group (no interval: one session cannot be resampled) sorts before a 40-session one."""
    rng = np.random.default_rng(11)
    n = 300
    sess = np.array([f"s{i:03d}" for i in rng.integers(0, 40, n)], dtype=object)
    grp = np.where(np.arange(n) < 20, "a-one", "b-many").astype(object)
    sess[:20] = "lone"
    rows = {
        "human": rng.random(n) < 0.4,
        "decided_by": rng.choice(np.array(["gap", "gap", "header", "completion"], dtype=object), n),
        "decided_human": rng.random(n) < 0.5,
        "gap_s": np.round(rng.random(n) * 12, 1),
        "first_in_session": rng.random(n) < 0.1,
        "session_id": sess,
        "grp": grp,
    }
    t = np.array([0.0, 0.5, 1.0, 2.0, 3.0, 5.0, 8.0])
    res = sweep_from_cells(sweep_cells(rows, t), t, 1.0, 2.0, "harness", ("router",), 37, 3)
    for g in ("a-one", "b-many"):
        alone = sweep_one({k: v[grp == g] for k, v in rows.items()}, t, "router", g, 1.0, 2.0, 37, 3)[1]
        # (hand-built rows key a session by its index among the rows swept, so the resamples, hence the
        # interval's ends, differ between the two runs; whether there is an interval does not)
        got = res.recommendation[("router", g)]
        assert {k: v for k, v in got.items() if k != "interval"} == {k: v for k, v in alone.items() if k != "interval"}
        assert (got["interval"] is None) == (alone["interval"] is None), g
    assert res.recommendation[("router", "a-one")]["interval"] is None
    assert res.recommendation[("router", "b-many")]["interval"] is not None


def test_the_integer_cdf_steps_are_the_uniform_compared_with_the_cdf():
    """_draw compares the mixed 64-bit value x with _STEPS_X instead of f = (x >> 11) * 2**-53 with the CDF
    (the definition): the two agree on every x at and around each step, where a rounding would show."""
    xs = []
    for c in bootstrap._CDF[: bootstrap._STEPS]:
        m = int(np.floor(c * 2.0**53))  # the 53-bit values either side of the step
        for u in (m - 1, m, m + 1, m + 2):
            xs += [(u << 11) + low for low in (0, 1, 2046, 2047)]
    x = np.array(xs, dtype=np.uint64)
    f = (x >> np.uint64(11)) * (1.0 / (1 << 53))
    for c, step in zip(bootstrap._CDF, bootstrap._STEPS_X):
        assert np.array_equal(f >= c, x >= step)


@pytest.mark.parametrize("threads", ["1", "3"])
def test_resamples_shared_over_threads_give_the_same_sums(threads, monkeypatch):
    """sums_many's loop over the resamples, cut into contiguous ranges for worker threads: the same int64 sums
    as one resample at a time in one thread (_sums_range on the whole range), pair counts above one included."""
    rng = np.random.default_rng(5)
    n, nb, n_boot = 40, 9, 23
    keys = rng.integers(0, 2**63, n).astype(np.uint64)
    ones = (rng.integers(0, n, 120), rng.integers(0, nb, 120), np.ones(120))
    many = (rng.integers(0, n, 60), rng.integers(0, nb, 60), rng.integers(1, 4, 60))
    policies = [(ones, many, rng.integers(0, 5, (4, n)))]
    monkeypatch.setattr(bootstrap, "_AT_ONCE", 0)
    monkeypatch.setattr(bootstrap, "_PER_WORKER", 1)  # threads even for this little work
    monkeypatch.setenv("STALLSCAN_THREADS", threads)
    got = bootstrap.sums_many(policies, keys, nb, n_boot, 2)[0]
    w = bootstrap.weights(keys, n_boot, 2).astype(float)  # (sessions, n_boot)
    for (sess, b, cnt), sums in ((ones, got.h), (many, got.o)):
        expect = np.zeros((n_boot, nb))
        for s, b_, c in zip(sess, b, cnt):  # plain loop over the pairs
            expect[:, b_] += w[s] * c
        assert np.array_equal(sums, expect)
    assert np.array_equal(got.f, (policies[0][2][1:3] @ w).T)


def test_the_resample_loop_draws_the_weights_draw_gives():
    """_Draws (the per-resample loop's draws: the mix in place on chunks, the count read off the top-bits table)
    gives _draw's weights, the table's undecided values (a step's top bits, the CDF's tail) included; and the
    table's count is the comparisons' count wherever it decides one."""
    rng = np.random.default_rng(11)
    keys = rng.integers(0, 2**63, 300_000).astype(np.uint64)
    draws = bootstrap._Draws(keys)
    rs = bootstrap._resample_mix(4, 9)
    for r in rs:
        assert np.array_equal(draws(r), bootstrap._draw(keys, r).astype(float))
    top = [int(s) >> 48 << 48 for s in bootstrap._STEPS_X]  # each step's top 16 bits, the rest zero
    lows = (0, 1 << 47, (1 << 48) - 1)
    x = np.array([t + d + low for t in top for d in (-(1 << 48), 0, 1 << 48) for low in lows], dtype=np.uint64)
    counts = bootstrap._TOP_COUNTS[(x >> np.uint64(48)).astype(np.int64)]
    steps = (x[:, None] >= bootstrap._STEPS_X[None, :]).sum(axis=1)
    decided = counts != 255
    assert decided.any() and (~decided).any()
    assert np.array_equal(counts[decided], steps[decided])


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint32])
def test_dense_index_is_np_unique_with_its_inverse(dtype):
    """dense_index (a count per value) gives np.unique(sess, return_inverse=True): the sorted distinct values in the
    input's dtype and each row's rank, for an index with gaps, one too sparse for counting, and an empty one."""
    from stallscan.sweep.cells import dense_index

    rng = np.random.default_rng(3)
    for sess in (
        rng.choice(np.arange(0, 5_000, 3), 20_000).astype(dtype),  # (every third value: gaps)
        np.array([7, 10**6, 7, 3], dtype),  # (max far past 4 x the rows: np.unique itself)
        np.zeros(0, dtype),
    ):
        uniq, inv = dense_index(sess)
        want_u, want_i = np.unique(sess, return_inverse=True)
        assert uniq.dtype == want_u.dtype and np.array_equal(uniq, want_u)
        assert np.array_equal(inv, want_i)


def test_policy_parts_pairs_and_sums_equal_np_unique_over_shuffled_cells(monkeypatch):
    """policy_parts' (session, bin) pairs (one stable argsort) are np.unique's sorted keys with the weights summed
    per key, for cells in any order with counts above one, and the bootstrap's sums over them (the bin-sorted
    pairs, a session's place by lookup) equal the plain per-resample reference."""
    from stallscan.sweep.cells import policy_parts

    rng = np.random.default_rng(8)
    n, nb = 40_000, 57
    cells: dict[str, np.ndarray] = {
        "sess": rng.integers(0, 3_000, n).astype(np.int32) * 2,
        "bin": rng.integers(0, nb, n),
        "human": rng.random(n) < 0.6,
        "vgr_gap": rng.random(n) < 0.7,
        "decided_human": rng.random(n) < 0.5,
        "n": rng.integers(1, 4, n).astype(float),
        "skey": rng.integers(0, 2**63, n).astype(np.uint64),
    }
    (gh, go, fixed), keys, by_gap = policy_parts(cells, "router", nb)
    _, sess = np.unique(cells["sess"], return_inverse=True)
    for mask, got in ((by_gap & cells["human"], gh), (by_gap & ~cells["human"], go)):
        key, inv = np.unique(sess[mask].astype(np.int64) * nb + cells["bin"][mask], return_inverse=True)
        want = (key // nb, key % nb, np.bincount(inv, cells["n"][mask], minlength=len(key)))
        assert all(g.dtype == w.dtype and np.array_equal(g, w) for g, w in zip(got, want))
    assert len(go[0]) and (gh[2] > 1).any() and fixed[1:3].any()
    monkeypatch.setattr(bootstrap, "_AT_ONCE", 0)  # (the per-resample loop, not the few-sessions path)
    got_sums = bootstrap.sums_many([(gh, go, fixed)], keys, nb, 40, 2)[0]
    w = bootstrap.weights(keys, 40, 2).astype(float)  # (sessions, resamples)
    for pairs, sums in ((gh, got_sums.h), (go, got_sums.o)):
        expect = np.zeros((40, nb))
        for s_, b_, c in zip(*pairs):
            expect[:, b_] += w[s_] * c
        assert np.array_equal(sums, expect)
    assert np.array_equal(got_sums.f, (fixed[1:3] @ w).T)


@settings(max_examples=150, deadline=None)
@given(
    st.integers(1, 40),
    st.integers(1, 12),
    st.sampled_from([(1.0, 1.0), (1.0, 3.0), (2.0, 1.0), (0.0, 1.0)]),
    st.sampled_from([2.0, 0.0, 0.25, 9.0, -1.0, 1.1]),
    st.sampled_from([6, 10**8, 10**9]),
    st.integers(0, 2**32 - 1),
)
def test_whole_number_costs_pick_as_the_float_curve_does(n_boot, n_t, ab, current, top, seed):
    """The whole-number path (each resample's minimum-cost points where the bins' prefix sums peak, in int64)
    picks what choose_rows picks on the float cost curve, ties and several minimum runs included; with costs
    near 1e9 (choose_rows' tolerance then reaches 1) it leaves the choice to the float curve."""
    rng = np.random.default_rng(seed)
    t = np.sort(rng.choice(np.round(np.arange(0, 10.01, 0.25), 10), n_t, replace=False))
    nb = len(t) + 1
    s = bootstrap.Sums(
        rng.integers(0, 3, (n_boot, nb)) * rng.integers(1, top + 1),
        rng.integers(0, 3, (n_boot, nb)) * rng.integers(1, top + 1),
        rng.integers(0, top + 1, (n_boot, 2)),
    )
    a, b = ab
    h, o = s.h.astype(float), s.o.astype(float)
    fp = np.cumsum(o[:, ::-1], axis=1)[:, ::-1][:, 1:]
    fn = h.sum(axis=1)[:, None] - np.cumsum(h[:, ::-1], axis=1)[:, ::-1][:, 1:]
    want = plateau.choose_rows(a * (fp + s.f[:, 1:2]) + b * (fn + s.f[:, 0:1]), t, current)
    assert np.array_equal(bootstrap.picks_from_sums(s, t, a, b, current), want)
