"""Hand-written endings of tests/truth/intent_cases.csv (English, Chinese, Japanese, Korean), replayed as the
last round of a turn in the setting each names (tests/truth_sessions.py: after a tool round, after a call
that started background work, as the turn's first reply, in plan mode): no hand-off or wait is ever a stall,
every plan shape is one, and no hand-off veto fires on a plan shape (recall on real endings is measured by
tests/real/test_real_intent_precision.py)."""

from __future__ import annotations

import csv

import pytest

from stallscan.replay.stall_data import load
from stallscan.replay.stalls import replay_stalls
from stallscan.replay.stalls_agreement import disagreements
from stallscan.store.db import connect
from tests.helpers import TRUTH
from tests.truth_sessions import insert

with open(TRUTH / "intent_cases.csv", encoding="utf-8", newline="") as _fh:
    CASES = list(csv.DictReader(_fh))
# the issue-15 vetoes (stallscan/data/intent_signatures.toml); q_background_report is a wait since issue 25
VETO_IDS = {
    "q_question_mid",
    "q_question_cjk_mid",
    "q_conditional_en",
    "q_conditional_cjk",
    "q_option_menu",
    "q_background_report",
}


def test_the_vetoes_exist_as_question_or_wait_signatures():
    kinds = {s.id: s.kind for s in load().signatures}
    assert all(kinds.get(i) == ("wait" if i == "q_background_report" else "question") for i in VETO_IDS)


@pytest.fixture(scope="module")
def verdicts():
    con = connect(":memory:")
    reply = insert(con, [(c["id"], c["text"].replace("\\n", "\n"), c["setting"]) for c in CASES])
    replay_stalls(con, segmentation="fallback")
    assert disagreements(con) == []
    cur = con.execute(
        "SELECT event_id, round_kind, sig_hits, veto_hits, wait_hits, background, approval_mode FROM rounds"
    )
    by_event = {
        r[0]: {"round_kind": r[1], "sig_hits": list(r[2]), "veto_hits": list(r[3]), "wait_hits": list(r[4]),
               "background": r[5], "approval_mode": r[6]}
        for r in cur.fetchall()
    }  # fmt: skip
    con.close()
    return {key: by_event[eid] for key, eid in reply.items()}


def test_cases_cover_four_languages_and_every_veto_shape():
    langs = {(c["language"], c["label"]) for c in CASES}
    assert {(lang, lab) for lang in ("en", "zh", "ja", "ko") for lab in ("handoff", "plan")} <= langs
    shapes = {(c["language"], c["shape"]) for c in CASES if c["label"] == "handoff"}
    for lang in ("en", "zh", "ja", "ko"):
        for shape in ("question_mid", "conditional", "option_menu", "background_report"):
            assert (lang, shape) in shapes, (lang, shape)
    assert all(c["source"] for c in CASES)


@pytest.mark.parametrize("case", [c for c in CASES if c["label"] in ("handoff", "genuine")], ids=lambda c: c["id"])
def test_handoffs_and_waits_are_not_stalls(case, verdicts):
    v = verdicts[case["id"]]
    assert v["round_kind"] == "final", v
    # the evidence that made it one: a veto, a wait after background work, a plan-approval mode, or no intent
    assert v["veto_hits"] or (v["wait_hits"] and v["background"]) or v["approval_mode"] or not v["sig_hits"], v


@pytest.mark.parametrize(
    "case", [c for c in CASES if c["label"] == "plan" and c["class"] in "123456"], ids=lambda c: c["id"]
)
def test_issue25_plans_are_stalls(case, verdicts):
    """Issue 25: every hand-written plan shape of the six classes, in its setting, is a stall the replay finds
    (the older shapes are measured as recall, with their misses, by tests/real/intent_truth.py)."""
    v = verdicts[case["id"]]
    assert v["round_kind"] in ("narrated_intent", "dropped_tool_call"), v


@pytest.mark.parametrize("case", [c for c in CASES if c["label"] == "plan"], ids=lambda c: c["id"])
def test_no_handoff_veto_fires_on_a_plan(case, verdicts):
    v = verdicts[case["id"]]
    assert not set(v["veto_hits"]) & VETO_IDS and not (v["wait_hits"] and v["background"]), v
