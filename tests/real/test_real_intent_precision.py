"""Precision and recall of narrated_intent / silent_plan_as_answer against the hand-labelled truth set.

The figures are printed (run with -s to see them) and must not fall below what stallscan/data/precision.toml
records (the figures the report prints). Labels: tests/truth/*.csv, read
by hand (tests/real/intent_truth.py says how). Refresh precision.toml with STALLSCAN_UPDATE_PRECISION=1 only
after a change you mean to make, and say why in the commit.
"""

from __future__ import annotations

import os
import tomllib

import pytest

from tests.real.intent_truth import PRECISION_TOML, measure, toml_text


@pytest.fixture(scope="module")
def measured():
    try:
        return measure()
    except FileNotFoundError as exc:
        pytest.skip(str(exc))


def test_every_real_ending_is_labelled_and_found(measured):
    """Each label's file + line + text hash names exactly one text-only reply, and every text-only reply of
    the real Claude Code, Codex, Hermes and Cline files carries a label (the set survives re-ingest)."""
    assert measured["problems"] == []
    assert measured["real_genuine"] == 328


def test_precision_and_recall_do_not_fall_below_the_recorded_figures(measured):
    m = measured
    print(
        f"\nnarrated_intent on the truth set ({m['data_version']}):"
        f"\n  real genuine endings {m['real_genuine']} {m['real_by_harness']}, real plan-as-answer 0"
        f"\n  false alarms: {m['false_alarms_real']} narrated_intent / {m['silent_false_alarms_real']} "
        f"silent_plan_as_answer in {m['real_genuine']} real endings "
        f"(95 % upper bound {m['false_alarm_upper95_per_1000_real']:.1f} per 1,000); "
        f"{m['false_alarms_cases']} in {m['handoff_cases']} hand-written hand-offs"
        f"\n  positives {m['positives']} ({m['positives_real']} real narrations), detected {m['detected']} "
        f"(silent {m['detected_silent']}), by group {m['recall_by_group']}, by sample {m['recall_by_sample']}"
        f"\n  precision {m['precision']:.4f}  recall {m['recall']:.4f}"
    )
    if os.environ.get("STALLSCAN_UPDATE_PRECISION") == "1":
        PRECISION_TOML.write_text(toml_text(m), encoding="utf-8")
    rec = tomllib.loads(PRECISION_TOML.read_text(encoding="utf-8"))
    assert rec["data_version"] == m["data_version"], "signatures changed: re-measure (STALLSCAN_UPDATE_PRECISION=1)"
    assert m["real_genuine"] == rec["real_genuine"] and m["positives"] == rec["positives"]
    assert m["false_alarms_real"] <= rec["false_alarms_real"], m["false_alarm_ids"]
    assert m["silent_false_alarms_real"] <= rec["silent_false_alarms_real"], m["false_alarm_ids"]
    assert m["false_alarms_cases"] <= rec["false_alarms_cases"], m["false_alarm_ids"]
    assert m["detected"] >= rec["detected"], m["missed"]
    assert m["recall_by_sample"]["heldout"][1] >= rec["heldout_detected"], m["missed"]
    assert round(m["precision"], 4) >= rec["precision"] and round(m["recall"], 4) >= rec["recall"]


def test_target_at_most_one_false_alarm_per_1000_genuine_endings(measured):
    """The precision target. On 328 real endings a single false alarm is already 3 per 1,000, so the target holds
    only with none; the set is too small to *show* 1 per 1,000 (the 95 % bound with none is 9.1 per 1,000)."""
    assert measured["false_alarms_real"] == 0, measured["false_alarm_ids"]
    assert measured["false_alarms_cases"] == 0, measured["false_alarm_ids"]
