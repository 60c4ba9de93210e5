"""The shared bootstrap (stallscan.sweep.bootstrap: one pass over the resamples for every policy) picks,
resample for resample, the threshold a plain loop per policy picks: same random stream, same costs bit for
bit, same choice on the minimum-cost plateau."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from stallscan.sweep import bootstrap
from stallscan.sweep.core import _point


def loop_picks(parts, n_sess, t, a, b, n_boot, seed):
    """The reference: one policy, one resample at a time."""
    (gh, go, cells), nb = parts, len(t) + 1
    rng = np.random.default_rng(seed)
    out = np.empty(n_boot)
    for r in range(n_boot):
        w = np.bincount(rng.integers(0, n_sess, n_sess), minlength=n_sess).astype(float)
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
    parts = [_point(rows, t, p, "all", a, b) for p in names]
    n_sess = parts[0][3]
    if n_sess < 2:
        return
    got = bootstrap.picks([p[2] for p in parts], n_sess, t, a, b, 37, seed)
    for p, g in zip(parts, got):
        assert np.array_equal(g, loop_picks(p[2], n_sess, t, a, b, 37, seed))
