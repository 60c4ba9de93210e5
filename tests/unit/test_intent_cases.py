"""Hand-written endings of tests/truth/intent_cases.csv (English, Chinese, Japanese, Korean), replayed as the
last round of a turn after one tool round: no hand-off or wait is ever a narrated_intent stall, and no
hand-off veto fires on a plan shape (recall of the intent signatures themselves is measured, with the real
narrations, by tests/real/test_real_intent_precision.py)."""

from __future__ import annotations

import csv
import json

import pytest

from stallscan.replay.stall_data import load
from stallscan.replay.stalls import replay_stalls
from stallscan.replay.stalls_ref import disagreements
from stallscan.store.db import connect
from tests.helpers import TRUTH

with open(TRUTH / "intent_cases.csv", encoding="utf-8", newline="") as _fh:
    CASES = list(csv.DictReader(_fh))
# the issue-15 vetoes (stallscan/data/intent_signatures.toml)
VETO_IDS = {
    "q_question_mid",
    "q_question_cjk_mid",
    "q_conditional_en",
    "q_conditional_cjk",
    "q_option_menu",
    "q_background_report",
}


def test_the_vetoes_exist_as_question_signatures():
    kinds = {s.id: s.kind for s in load().signatures}
    assert all(kinds.get(i) == "question" for i in VETO_IDS)


@pytest.fixture(scope="module")
def verdicts():
    con = connect(":memory:")
    rows = []
    for i, c in enumerate(CASES):
        steps = [
            ("user", "message", "please carry on", [], None),
            ("assistant", "message", None, [{"id": f"c{i}", "name": "read_file", "arguments": "{}"}], "tool_calls"),
            ("tool", "tool_result", "ok", [], None),
            ("assistant", "message", c["text"].replace("\\n", "\n"), [], "stop"),
        ]
        for seq, (role, kind, t, calls, fr) in enumerate(steps, 1):
            rows.append(
                (f"{c['id']}-{seq}", "openai_chat", f"/cases/{c['id']}.jsonl", seq, seq, 0, 1, c["id"], seq, None,
                 None, "none", role, kind, t, calls, len(calls), None, fr, fr, None, None, None, None, None, None,
                 False, None, None, json.dumps({}))
            )  # fmt: skip
    con.executemany("INSERT INTO events VALUES (" + ",".join(["?"] * 30) + ")", rows)
    replay_stalls(con, segmentation="fallback")
    assert disagreements(con) == []
    cur = con.execute("SELECT session_id, round_kind, sig_hits, veto_hits FROM rounds WHERE round_in_turn = 2")
    out = {r[0]: {"round_kind": r[1], "sig_hits": list(r[2]), "veto_hits": list(r[3])} for r in cur.fetchall()}
    con.close()
    return out


def test_cases_cover_four_languages_and_every_veto_shape():
    langs = {(c["language"], c["label"]) for c in CASES}
    assert {(lang, lab) for lang in ("en", "zh", "ja", "ko") for lab in ("handoff", "plan")} <= langs
    shapes = {(c["language"], c["shape"]) for c in CASES if c["label"] == "handoff"}
    for lang in ("en", "zh", "ja", "ko"):
        for shape in ("question_mid", "conditional", "option_menu", "background_report"):
            assert (lang, shape) in shapes, (lang, shape)
    assert all(c["source"] for c in CASES)


@pytest.mark.parametrize("case", [c for c in CASES if c["label"] == "handoff"], ids=lambda c: c["id"])
def test_handoffs_and_waits_are_not_stalls(case, verdicts):
    v = verdicts[case["id"]]
    assert v["round_kind"] == "final", v
    assert set(v["veto_hits"]) & VETO_IDS or not v["sig_hits"], v


@pytest.mark.parametrize("case", [c for c in CASES if c["label"] == "plan"], ids=lambda c: c["id"])
def test_no_handoff_veto_fires_on_a_plan(case, verdicts):
    v = verdicts[case["id"]]
    assert not set(v["veto_hits"]) & VETO_IDS, v
