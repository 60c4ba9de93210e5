"""The SQL replay and the plain-Python reference walk agree on generated sessions (hypothesis).

Sessions are written straight into `events` (every column the replay reads), mixing human prompts,
known nudges and automatic prompts, interrupt markers, tool results, turn_aborted events and assistant
replies whose finish reasons, tool calls and texts (intent / done / question phrases, CJK punctuation,
blank, sentinels) are drawn at random.
"""

from __future__ import annotations

import json
import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stallscan.replay.stall_data import load
from stallscan.replay.stalls import replay_stalls
from stallscan.replay.stalls_agreement import disagreements
from stallscan.store.db import connect
from tests.helpers import examples, scan_batch_rows

DATA = load()
FRAGMENTS = [
    "I'll now run the tests.",
    "Next, I'll update a.py",
    "Let me check the config",
    "Now I will read b.py.",
    "let me now open",
    "I'm going to patch it",
    "Done.",
    "All set!",
    "Let me know if you need anything.",
    "Would you like me to continue?",
    "?",
    "：",
    ":",
    "…",
    ".",
    "1. Verify the template",
    "- item",
    "“Okay, I get it. Let me shoot something.”",
    "接下来我将运行测试。",
    "已完成修改。",
    "让我看看",
    "原因如下：",
    "원하시면",
    "확인해 드리겠습니다.",
    "次に設定を確認します。",
    "é",
    "👍🏽",
    "a.py",
    "I will read a.py now.",
    "Here is the summary",
    "the build failed",
    "(empty)",
    "API Error: 500",
    "No response requested.",
    # hand-offs and waits (vetoes that look at the whole tail)
    "Which port? Once I know, I'll update it.",
    "see ?view=a and a?.b",
    "(a) I write the loader, or (b) I add tests",
    "Option A: keep it. Option B: drop it.",
    "as soon as you say go",
    "Please re-upload the PDF.",
    "I'll report back when the build finishes.",
    "你想用哪一个？确认后我会更新",
    "需要我现在提交吗",
    "等你确认后我就合并",
    "どちらを使いますか？",
    "ご確認いただき次第、マージします。",
    "어느 포트를 쓸까요?확인되면",
    "승인해 주시면 바로 병합하겠습니다.",
    "끝나면 알려 드리겠습니다.",
    "I’m committing that now.",
    "Now writing the test suite:",
    "Clean compile. Now run tests.",
]
USER_TEXTS = [p.text for p in DATA.prompts if p.role in ("nudge", "automatic", "interrupt")] + [
    "fix the bug",
    "Please continue.",
    "yes",
    "   ",
    "",
    "[maria] 로그도 확인해 줘",
    "继续",
]
FINISH = [None, "stop", "tool_calls", "length", "error", "cancelled", "end_turn", "tool_use", "stop_sequence", "weird"]
NORM = {
    "stop": "stop",
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_calls": "tool_calls",
    "tool_use": "tool_calls",
    "length": "length",
    "error": "error",
    "cancelled": "cancelled",
}

text_st = st.lists(st.sampled_from(FRAGMENTS), max_size=5).flatmap(
    lambda parts: st.lists(
        st.sampled_from([" ", "\n", "\n\n", "", "  \n"]), min_size=len(parts) + 1, max_size=len(parts) + 1
    ).map(lambda seps: seps[0] + "".join(p + s for p, s in zip(parts, seps[1:])))
)

assistant_st = st.fixed_dictionaries(
    {
        "role": st.just("assistant"),
        "kind": st.just("message"),
        "text": st.one_of(st.none(), text_st, text_st, text_st),
        "n_tool_calls": st.sampled_from([0, 0, 0, 1, 2]),
        "finish_reason": st.sampled_from(FINISH),
        "phase": st.sampled_from([None, None, "commentary", "final_answer"]),
        "model": st.sampled_from([None, "gpt-5.4", "claude-opus-4-6", "qwen3", "mystery"]),
    }
)
user_st = st.fixed_dictionaries(
    {
        "role": st.just("user"),
        "kind": st.sampled_from(["message", "message", "queued_input", "context"]),
        "text": st.one_of(st.sampled_from(USER_TEXTS), text_st, text_st),
        "is_meta": st.sampled_from([False, False, False, True]),
    }
)
tool_st = st.fixed_dictionaries({"role": st.just("tool"), "kind": st.just("tool_result"), "text": st.just("ok")})
aborted_st = st.fixed_dictionaries({"role": st.just("system"), "kind": st.just("turn_aborted"), "text": st.just(None)})
session_st = st.lists(
    st.one_of(*[assistant_st] * 6, *[user_st] * 3, *[tool_st] * 3, aborted_st), min_size=1, max_size=24
)


# scripted steps: stall-rich sessions (the free-form generator above rarely lines up a stall and its nudge)
NUDGE_TEXT = {p.reacts_to: p.text for p in reversed(DATA.prompts) if p.role == "nudge"}
STEPS = {
    "human": lambda t: [{"role": "user", "kind": "message", "text": "please " + t}],
    "tool_round": lambda t: [
        {"role": "assistant", "kind": "message", "text": t, "n_tool_calls": 1, "finish_reason": "tool_calls"},
        {"role": "tool", "kind": "tool_result", "text": "ok"},
    ],
    "dropped": lambda t: [
        {
            "role": "assistant",
            "kind": "message",
            "text": t or "I'll read a.py now.",
            "n_tool_calls": 0,
            "finish_reason": "tool_calls",
        }
    ],
    "narrated": lambda t: [
        {
            "role": "assistant",
            "kind": "message",
            "text": (t + " Now I'll run the tests.").strip(),
            "n_tool_calls": 0,
            "finish_reason": "stop",
        }
    ],
    "final": lambda t: [
        {"role": "assistant", "kind": "message", "text": t or "Done.", "n_tool_calls": 0, "finish_reason": None}
    ],
    "empty": lambda t: [
        {"role": "assistant", "kind": "message", "text": "", "n_tool_calls": 0, "finish_reason": "stop"}
    ],
    "interrupt": lambda t: [{"role": "user", "kind": "message", "text": "[Request interrupted by user]"}],
    **{
        f"nudge_{k}": (lambda k: lambda t: [{"role": "user", "kind": "message", "text": NUDGE_TEXT[k]}])(k)
        for k in NUDGE_TEXT
    },
}
scripted_st = st.lists(st.tuples(st.sampled_from(sorted(STEPS)), text_st), min_size=1, max_size=16).map(
    lambda steps: [ev for name, t in steps for ev in STEPS[name](t)]
)


def _insert(con, sessions: list[list[dict]], rnd: random.Random | None = None) -> None:
    """Insert the sessions' events; with rnd, in a shuffled storage order (sessions interleaved, seq out of
    order), so the replay's scan has to order them itself."""
    rows = []
    for sid, evs in enumerate(sessions):
        for seq, e in enumerate(evs, 1):
            meta = {"isMeta": e.get("is_meta", False)}
            if e.get("phase"):
                meta["phase"] = e["phase"]
            n = e.get("n_tool_calls", 0)
            calls = [{"id": f"c{seq}_{i}", "name": "t", "arguments": "{}"} for i in range(n)]
            fr = e.get("finish_reason")
            rows.append(
                (
                    f"s{sid}-{seq:03d}",
                    "openai_chat",
                    f"/x/s{sid}.jsonl",
                    seq,
                    seq,
                    0,
                    1,
                    f"s{sid}",
                    seq,
                    None,
                    None,
                    "none",
                    e["role"],
                    e["kind"],
                    e.get("text"),
                    calls,
                    n,
                    None,
                    fr,
                    NORM.get(fr),
                    None,
                    None,
                    None,
                    None,
                    None,
                    e.get("model") if e["role"] == "assistant" else None,
                    False,
                    None,
                    None,
                    json.dumps(meta),
                )
            )
    if rnd is not None:
        rnd.shuffle(rows)
    con.executemany("INSERT INTO events VALUES (" + ",".join(["?"] * 30) + ")", rows)


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    sessions=st.lists(st.one_of(session_st, scripted_st, scripted_st), min_size=1, max_size=3),
    retry_bound=st.integers(0, 4),
    narrated_bound=st.integers(0, 3),
    rnd=st.one_of(st.none(), st.randoms(use_true_random=False)),
    batch=st.sampled_from([None, 1, 3, 8]),
)
def test_sql_and_reference_walk_agree(sessions, retry_bound, narrated_bound, rnd, batch):
    """batch: the scans' batch size (STALLSCAN_SCAN_BATCH_ROWS): small ones cut sessions across batches of the
    turn scan (carried into the next) and split the walk into several shares of the sessions."""
    con = connect(":memory:")
    try:
        with scan_batch_rows(batch):
            _insert(con, sessions, rnd)
            replay_stalls(con, retry_bound, narrated_bound, segmentation="fallback")
        assert disagreements(con, retry_bound, narrated_bound) == []
    finally:
        con.close()


def test_signature_regexes_agree_between_re2_and_python():
    """Each signature, on every fragment combination above: DuckDB's RE2 and Python's re say the same."""
    con = connect(":memory:")
    texts = (
        FRAGMENTS
        + [a + " " + b for a in FRAGMENTS for b in FRAGMENTS]
        + [a + "\n" + b for a in FRAGMENTS[:12] for b in FRAGMENTS]
    )
    for sig in DATA.signatures:
        got = [
            r[0]
            for r in con.execute(
                "SELECT regexp_matches(t, $re) FROM unnest($ts::VARCHAR[]) AS u(t)", {"re": sig.regex, "ts": texts}
            ).fetchall()
        ]
        want = [sig.compiled.search(t) is not None for t in texts]
        assert got == want, sig.id
    con.close()
