"""Issue 23, item 1 (threshold advice): the advice reads a plateau off the cost curve, keeps the current
threshold when it lies on it, and says "too few to recommend" below the stated minimum. Expected values
come from the hand-built costs below, not from the code under test."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from stallscan.sweep import plateau
from stallscan.sweep.point import sweep_one

T = np.round(np.arange(0.0, 5.01, 0.25), 2)  # 0, 0.25, ..., 5.0


def _cost(low: float, high: float) -> np.ndarray:
    """Cost 10 outside [low, high], 4 inside: a flat minimum from low to high."""
    return np.where((low - 1e-9 <= T) & (high + 1e-9 >= T), 4.0, 10.0)


def test_current_on_the_plateau_is_kept():
    got = plateau.choose(_cost(1.0, 3.5), T, 2.0)
    assert got == (2.0, 1.0, 3.5, True)  # the first argmin (1.0) was the old answer


def test_current_off_the_plateau_moves_to_its_nearest_edge():
    assert plateau.choose(_cost(2.5, 4.0), T, 2.0) == (2.5, 2.5, 4.0, False)
    assert plateau.choose(_cost(0.25, 1.0), T, 2.0) == (1.0, 0.25, 1.0, False)


def test_two_runs_the_nearer_one_wins_and_ties_go_low():
    cost = np.minimum(_cost(0.5, 0.75), _cost(4.0, 4.5))
    assert plateau.choose(cost, T, 3.0) == (4.0, 4.0, 4.5, False)  # 1.0 s to 4.0 against 2.25 s to 0.75
    cost = np.minimum(_cost(1.0, 1.0), _cost(3.0, 3.0))
    assert plateau.choose(cost, T, 2.0) == (1.0, 1.0, 1.0, False)  # 1 s either way: the smaller


def test_current_between_grid_points_of_the_plateau_is_on_it():
    assert plateau.choose(_cost(1.0, 3.5), T, 2.1) == (2.1, 1.0, 3.5, True)


def test_too_few_keeps_the_current_value():
    few = plateau.advice(_cost(0.0, 1.0), T, 2.0, n_sessions=1, n_gap_prompts=2)
    assert few["verdict"] == plateau.TOO_FEW and few["threshold"] == 2.0 and few["on_plateau"] is False
    ok = plateau.advice(_cost(0.0, 1.0), T, 2.0, n_sessions=plateau.MIN_SESSIONS, n_gap_prompts=50)
    assert ok["verdict"] == plateau.MOVE and ok["threshold"] == 1.0 and ok["plateau"] == [0.0, 1.0]
    assert plateau.advice(_cost(0.0, 1.0), T, 2.0, 50, plateau.MIN_GAP_PROMPTS - 1)["verdict"] == plateau.TOO_FEW


def _rows(n_sess: int, per: int) -> dict[str, np.ndarray]:
    """Per session: `per` automatic prompts 0.2 s after a final reply and `per` human prompts 6 s after."""
    n = 2 * per * n_sess
    human = np.tile(np.repeat([False, True], per), n_sess)
    return {
        "human": human,
        "decided_by": np.array(["gap"] * n, dtype=object),
        "decided_human": human,
        "gap_s": np.where(human, 6.0, 0.2),
        "first_in_session": np.zeros(n, bool),
        "session_id": np.repeat([f"s{i:02d}" for i in range(n_sess)], 2 * per).astype(object),
        "grp": np.array(["all"] * n, dtype=object),
    }


def test_interval_contains_the_current_value_on_a_flat_minimum():
    """Every threshold from 0.25 s to 6 s separates the two classes: cost 0 there, so 2 s is kept, and every
    resample keeps it too (the first argmin gave 0.25 s and an interval of [0.25, 0.25])."""
    _, rec = sweep_one(_rows(10, 3), np.round(np.arange(0.0, 10.01, 0.25), 2), "router", "all", 1, 1, 200, 0)
    assert rec["threshold"] == 2.0 and rec["plateau"] == [0.25, 6.0] and rec["verdict"] == "keep"
    assert rec["interval"] == [2.0, 2.0] and rec["at_current"]["cost"] == 0


def test_two_prompts_are_too_few():
    _, rec = sweep_one(_rows(1, 1), np.round(np.arange(0.0, 10.01, 0.25), 2), "router", "all", 1, 1, 0, 0)
    assert rec["verdict"] == "too few to recommend" and rec["threshold"] == 2.0 and rec["sessions"] == 1


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.lists(st.integers(0, 3), min_size=9, max_size=9), min_size=1, max_size=12),
    st.sampled_from([2.0, 2.1, 0.0, 8.0, -1.0, 9.5, 0.25, 5.0]),
)
def test_choose_rows_equals_choose_row_by_row(rows, current):
    """The bootstrap's choice over every resample at once equals the choice of each cost curve alone, with
    ties, several minimum-cost runs and a current threshold on the grid, between points and outside."""
    t = np.array([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 5.0, 8.0, 8.5])
    cost = np.array(rows, float) * 0.1 + 7.0  # small integer steps over a constant: float rounding included
    got = plateau.choose_rows(cost, t, current)
    assert got.tolist() == [plateau.choose(row, t, current)[0] for row in cost]
