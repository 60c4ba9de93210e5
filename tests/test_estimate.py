"""The headline's true-rate estimate (stallscan/report/estimate.py). Expected figures come from the formula's
limits worked by hand, not from the code: with a perfect, fully measured detector the interval is the
binomial one of the count; a detector that finds half the endings doubles the rate; a count of 0 never gives
an upper bound of 0; less measurement gives a wider interval."""

from __future__ import annotations

import math

from stallscan.report.estimate import detector_figures, estimate, estimate_sentence, true_rate

BIG = 1_000_000  # a detector measured on so many endings that its own uncertainty vanishes


def test_a_perfect_detector_gives_the_counts_binomial_interval():
    e = true_rate(50, 1000, BIG, BIG, 0, BIG)
    assert e is not None
    # the posterior of the flagged share, Beta(51, 951): mean 51/1002, sd ~ sqrt(p (1 - p) / n)
    p = 51 / 1002
    sd = math.sqrt(p * (1 - p) / 1003)
    assert abs(e["per_1000"] - 1000 * p) < 1.0
    assert abs(e["low"] - 1000 * (p - 1.96 * sd)) < 2.0 and abs(e["high"] - 1000 * (p + 1.96 * sd)) < 2.0


def test_half_recall_doubles_the_rate():
    e = true_rate(50, 1000, BIG // 2, BIG, 0, BIG)
    assert e is not None and abs(e["per_1000"] - 2000 * 51 / 1002) < 2.0


def test_false_alarms_are_taken_off():
    # 1 % of genuine endings flagged: 50 flags in 1,000 turns hold about 40 true ones at full recall
    e = true_rate(50, 1000, BIG, BIG, BIG // 100, BIG)
    assert e is not None and abs(e["per_1000"] - 1000 * (51 / 1002 - 0.01) / 0.99) < 1.5


def test_zero_flags_is_not_a_rate_of_zero():
    e = true_rate(0, 1000, 48, 53, 0, 457)
    assert e is not None and e["high"] > 0 and e["per_1000"] > 0
    measured = {
        "labagents_positives": 53,
        "labagents_detected": 48,
        "real_genuine_all": 457,
        "false_alarms_real_all": 0,
    }
    sentence = estimate_sentence(estimate(0, 1000, measured))
    assert "not a rate of 0" in sentence and "at most" in sentence


def test_less_measurement_widens_the_interval():
    a = true_rate(20, 1000, 48, 53, 0, 457)
    b = true_rate(20, 1000, 9, 10, 0, 50)
    assert a is not None and b is not None
    assert b["high"] - b["low"] > a["high"] - a["low"]


def test_same_counts_same_figures_and_missing_measures():
    assert true_rate(7, 500, 48, 53, 0, 457) == true_rate(7, 500, 48, 53, 0, 457)
    assert true_rate(1, 0, 48, 53, 0, 457) is None
    assert detector_figures({"precision": 1.0}) is None  # a precision.toml older than issue 25
