"""Precision and recall of the silent-ending detector against the hand-labelled truth set, per class.

The figures are printed (run with -s to see them) and must not fall below what stallscan/data/precision.toml
records (the figures the report's headline estimate reads). Labels:
tests/truth/*.csv, read by hand (tests/real/intent_truth.py says how). Refresh precision.toml with
`python tests/real/intent_truth.py --write` (or STALLSCAN_UPDATE_PRECISION=1) only after a change you mean to
make, and say why in the commit.
"""

from __future__ import annotations

import os
import tomllib

import pytest

from tests.real.intent_truth import PRECISION_TOML, class_lines, measure, toml_text


@pytest.fixture(scope="module")
def measured():
    try:
        return measure()
    except FileNotFoundError as exc:
        pytest.skip(str(exc))


@pytest.fixture(scope="module")
def recorded(measured):
    if os.environ.get("STALLSCAN_UPDATE_PRECISION") == "1":
        PRECISION_TOML.write_text(toml_text(measured), encoding="utf-8")
    return tomllib.loads(PRECISION_TOML.read_text(encoding="utf-8"))


def test_every_real_ending_is_labelled_and_found(measured):
    """Each label's file + line + text hash names exactly one reply, and every text-only reply of the real
    Claude Code, Codex, Hermes and Cline files carries a label (the set survives re-ingest)."""
    assert measured["problems"] == []
    assert measured["real_genuine"] == 328


def test_precision_and_recall_do_not_fall_below_the_recorded_figures(measured, recorded):
    m, rec = measured, recorded
    print(
        f"\nsilent-ending detector on the truth set ({m['data_version']}):"
        f"\n  real genuine endings {m['real_genuine']} {m['real_by_harness']} + LabAgents {m['labagents_genuine']}"
        f"\n  false alarms: {m['false_alarms_real']} / {m['silent_false_alarms_real']} silent in {m['real_genuine']}, "
        f"{m['labagents_false_alarms']} in LabAgents, {m['false_alarms_cases']} in {m['handoff_cases']} hand-offs"
        f"\n  real plan-as-answer (LabAgents) {m['labagents_positives']}, detected {m['labagents_detected']}"
        f"\n  shapes {m['positives']}, detected {m['detected']}, by sample {m['recall_by_sample']}\n  "
        + "\n  ".join(class_lines(m))
        + "".join(f"\n  NOTE {n}" for n in m["notes"])
    )
    assert rec["data_version"] == m["data_version"], "rules changed: re-measure (tests/real/intent_truth.py --write)"
    assert rec.get("truth_files") == m["truth_files"], "truth files changed: re-measure (intent_truth.py --write)"
    assert m["real_genuine"] == rec["real_genuine"] and m["positives"] == rec["positives"]
    assert m["false_alarms_real"] <= rec["false_alarms_real"], m["false_alarm_ids"]
    assert m["silent_false_alarms_real"] <= rec["silent_false_alarms_real"], m["false_alarm_ids"]
    assert m["false_alarms_cases"] <= rec["false_alarms_cases"], m["false_alarm_ids"]
    assert m["detected"] >= rec["detected"], m["missed"]
    assert m["recall_by_sample"]["heldout"][1] >= rec["heldout_detected"], m["missed"]
    assert round(m["precision"], 4) >= rec["precision"] and round(m["recall"], 4) >= rec["recall"]
    for c, want in rec["classes_shapes"].items():  # per class, on the shapes
        got = m["classes_shapes"][c]
        assert got["positives"] == want["positives"], c
        assert got["detected"] >= want["detected"], (c, m["missed"])
        assert got["false_alarms"] <= want["false_alarms"], (c, m["false_alarm_ids"])


def test_real_plan_as_answer_endings_per_class(measured, recorded):
    """The LabAgents endings (skipped, saying why, when ../shared/data/labagents is absent)."""
    m, rec = measured, recorded
    if m["notes"]:
        pytest.skip("; ".join(m["notes"]))
    assert m["labagents_positives"] >= rec["labagents_positives"]  # labels only get added
    assert m["labagents_detected"] >= rec["labagents_detected"], m["missed"]
    assert m["labagents_false_alarms"] <= rec["labagents_false_alarms"], m["false_alarm_ids"]
    for c, want in rec["classes_real"].items():
        got = m["classes_real"][c]
        assert got["detected"] >= want["detected"], (c, m["missed"])
        assert got["false_alarms"] <= want["false_alarms"], (c, m["false_alarm_ids"])


def test_targets(measured):
    """The targets: recall >= 90 % on real plan-as-answer endings; at most 1 false flag per 1,000 genuine
    real endings. With 456 genuine endings one false alarm is already 2.2 per 1,000, so the target holds only
    with none (the set is too small to *show* 1 per 1,000: the 95 % bound with none is 6.5 per 1,000)."""
    m = measured
    assert m["false_alarms_real_all"] == 0, m["false_alarm_ids"]
    assert m["false_alarms_cases"] == 0, m["false_alarm_ids"]
    if not m["notes"]:
        assert m["real_recall"] >= 0.9, m["missed"]
