"""The true rate of silent endings behind a flagged count, from the detector's measured recall and false alarms.

The replay flags k of n turns. The detector finds a true silent ending with probability r (recall, measured on
real plan-as-answer endings) and flags a genuine ending with probability f (false alarms, measured on genuine
real endings); both come from stallscan/data/precision.toml (tests/real/intent_truth.py). With a true share pi,
a turn is flagged with probability q = pi r + (1 - pi) f, so pi = (q - f) / (r - f).

Every quantity is uncertain, and the interval carries all of it (a Monte Carlo over the posteriors, uniform
priors): q ~ Beta(k + 1, n - k + 1) (the count's sampling noise), r ~ Beta(detected + 1, missed + 1),
f ~ Beta(false alarms + 1, clean genuine + 1); pi is clipped to [0, 1]. The estimate is the mean of 1,000 pi over the
draws (above 0 even with no flag), the interval its 2.5th and 97.5th percentiles. The generator is seeded: the same counts give the same figures.
With k = 0 the upper end stays above 0 (a count of 0 is not a rate of 0). docs/rules.md states the formula.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from stallscan.sweep.quantile import quantile

DRAWS = 20_000
SEED = 25  # fixed: reports are reproducible


def true_rate(
    flagged: int,
    turns: int,
    detected: int,
    positives: int,
    false_alarms: int,
    genuine: int,
    draws: int = DRAWS,
) -> dict[str, float] | None:
    """Mean and 95 % interval of the true silent endings per 1,000 turns; None without turns or measures."""
    if turns <= 0 or positives <= 0 or genuine <= 0 or not 0 <= flagged <= turns:
        return None
    rng = np.random.default_rng(SEED)
    q = rng.beta(flagged + 1, turns - flagged + 1, draws)
    r = rng.beta(detected + 1, positives - detected + 1, draws)
    f = rng.beta(false_alarms + 1, genuine - false_alarms + 1, draws)
    gap = np.maximum(r - f, 1e-9)  # a detector no better than chance (r <= f) says nothing: pi -> 1
    pi = np.clip((q - f) / gap, 0.0, 1.0) * 1000
    lo, hi = quantile(pi, 2.5 / 100), quantile(pi, 97.5 / 100)  # np.percentile(pi, [2.5, 97.5]), bit for bit
    return {"per_1000": float(pi.mean()), "low": float(lo), "high": float(hi)}


def detector_figures(p: dict[str, Any] | None) -> dict[str, Any] | None:
    """Recall, precision and their counts from precision.toml (None when it predates issue 25's fields)."""
    keys = ("labagents_positives", "labagents_detected", "real_genuine_all", "false_alarms_real_all")
    if not p or any(k not in p for k in keys) or not p["labagents_positives"]:
        return None
    det, pos = int(p["labagents_detected"]), int(p["labagents_positives"])
    fa, gen = int(p["false_alarms_real_all"]), int(p["real_genuine_all"])
    return {
        "recall": det / pos,
        "precision": det / (det + fa) if det + fa else None,
        "detected": det,
        "positives": pos,
        "false_alarms": fa,
        "genuine": gen,
        "current": bool(p.get("current", True)),
        "measured_on": p.get("measured_on"),
    }


def estimate(flagged: int, turns: int, p: dict[str, Any] | None) -> dict[str, Any] | None:
    """The headline's estimate: the detector's figures plus the true rate with its interval."""
    d = detector_figures(p)
    if d is None:
        return None
    rate = true_rate(flagged, turns, d["detected"], d["positives"], d["false_alarms"], d["genuine"])
    if rate is None:
        return None
    return {**d, **{k: round(v, 1) for k, v in rate.items()}, "flagged": flagged, "turns": turns}


def estimate_sentence(e: dict[str, Any]) -> str:
    """One sentence for every format (the headline's text carries it)."""
    prec = "–" if e["precision"] is None else f"{e['precision']:.0%}"
    stale = "" if e["current"] else " (measured on older rules)"
    head = (
        f"None flagged is not a rate of 0: the true rate is at most {e['high']:.1f} per 1,000 turns (95 %), "
        if e["flagged"] == 0
        else f"Estimated true rate {e['per_1000']:.1f} per 1,000 turns (95 % interval {e['low']:.1f}–{e['high']:.1f}), "
    )
    return (
        head + f"from the detector's recall {e['recall']:.0%} ({e['detected']} of {e['positives']} real "
        f"plan-as-answer endings) and precision {prec} ({e['false_alarms']} false alarms in {e['genuine']:,} "
        f"real genuine endings){stale}."
    )
