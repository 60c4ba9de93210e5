"""stallscan.sweep.quantile: np.quantile's linear quantile, bit for bit, without numpy.ma's import."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from stallscan.sweep.quantile import quantile

FLOATS = st.floats(allow_nan=False, allow_infinity=False, width=64, min_value=-1e12, max_value=1e12)
QS = st.one_of(st.sampled_from([0.0, 0.025, 0.5, 0.975, 1.0, 2.5 / 100, 97.5 / 100]), st.floats(0.0, 1.0))


@settings(max_examples=300, deadline=None)
@given(st.lists(FLOATS, min_size=1, max_size=60), QS)
@example([0.0, -0.0], 1.0)  # (signed zeros: numpy's _lerp turns a top of -0.0 into 0.0, but not for one value)
@example([-0.0, -0.0], 1.0)
@example([-0.0], 1.0)
@example([-0.0, -0.0], 0.0)
@example([-1.0, -0.0], 1.0)
def test_equals_np_quantile(values: list[float], q: float) -> None:
    a = np.asarray(values, dtype=np.float64)
    want = float(np.quantile(a, q))
    got = quantile(a, q)
    assert got == want or (np.isnan(got) and np.isnan(want))
    assert np.signbit(got) == np.signbit(want) or got != 0.0


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(0, 600), min_size=1, max_size=1000).map(lambda v: np.asarray(v, np.float64) * 0.05))
def test_equals_np_percentile_on_grid_values(a: np.ndarray) -> None:
    """The report's two calls: the bootstrap's picked thresholds (grid values, many ties) and the headline's
    draws (np.percentile(x, [2.5, 97.5]))."""
    lo, hi = np.percentile(a, [2.5, 97.5])
    assert (quantile(a, 2.5 / 100), quantile(a, 97.5 / 100)) == (float(lo), float(hi))
    assert (quantile(a, 0.025), quantile(a, 0.975)) == (float(np.quantile(a, 0.025)), float(np.quantile(a, 0.975)))


def test_other_inputs_go_to_numpy() -> None:
    """Integers, NaNs, infinities and 2-D arrays take np.quantile's own path (same answer as it gives)."""
    for a in (
        np.arange(11),
        np.linspace(0.0, 1.0, 7, dtype=np.float32),
        np.array([1.0, np.nan, 3.0]),
        np.array([1.0, np.inf, -np.inf, 2.0]),
        np.array([[1.0, 2.0], [3.0, 4.0]]),
    ):
        with np.errstate(invalid="ignore"):  # (inf - inf in numpy's interpolation)
            want = float(np.quantile(a, 0.3))
            got = quantile(a, 0.3)
        assert got == want or (np.isnan(got) and np.isnan(want))


def test_calls_no_np_unique(monkeypatch: pytest.MonkeyPatch) -> None:
    """The point of the module: numpy 2's np.quantile calls np.unique, whose masked-array check imports numpy.ma
    (lazily loaded); quantile gives the same value without calling it."""
    a = np.linspace(0.0, 30.0, 1001)
    want = float(np.quantile(a, 0.025))

    def refused(*args: object, **kwargs: object) -> None:
        raise AssertionError("np.unique called")

    monkeypatch.setattr(np, "unique", refused)
    with pytest.raises(AssertionError):
        np.quantile(a, 0.025)  # (the check sees numpy's own call)
    assert quantile(a, 0.025) == want
