"""Property: on generated Claude Code and Codex sessions, the guard's verdict at every text-only reply (fed
the transcript cut after it plus the hook JSON) equals the replay's round_kind (the stall count is held
to the bound end to end in tests/functional/test_guard_hook.py).

Sessions mix human prompts, tool rounds (a Claude reply may span several lines of one message.id, with the
tool results between them), narrations, finals, questions, hand-offs, CJK text, the guard's own
Stop-hook feedback, other hooks' feedback and interrupt markers.
"""

from __future__ import annotations

import json
import os

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stallscan.guard.judge import nudge_text
from tests.guard_helpers import agreement

NUDGE = nudge_text()
TEXTS = [
    "I'll now run the tests.",
    "Next, I'll update a.py",
    "Let me check the config:",
    "Done. All tests pass.",
    "Would you like me to continue?",
    "Let me know if you need anything.",
    "Here is the summary of the change.",
    "接下来我将运行测试。",
    "确认해 드리겠습니다.",
    "I will read a.py now.",
    "(empty)",
    "API Error: 500",
    "",
    "The build failed.\n\nNow I'll fix the import.",
]
STEP = st.sampled_from(["human", "tool", "tool2", "text", "text", "text", "nudge", "other_hook", "interrupt"])


def _claude(steps: list[tuple[str, str, str | None]]) -> list[str]:
    out, n = [], 0

    def rec(typ, message, **extra):
        nonlocal n
        n += 1
        r = {
            "type": typ,
            "uuid": f"u{n}",
            "sessionId": "s1",
            "isSidechain": False,
            "timestamp": f"2026-01-01T00:{n // 60:02d}:{n % 60:02d}.000Z",
            "message": message,
        }
        r.update(extra)
        out.append(json.dumps(r))

    for i, (kind, text, stop) in enumerate(steps):
        if kind == "human":
            rec("user", {"role": "user", "content": f"please do task {i}"})
        elif kind in ("tool", "tool2"):
            mid = f"msg_{i}"
            if text:
                rec(
                    "assistant",
                    {
                        "id": mid,
                        "role": "assistant",
                        "model": "claude-x",
                        "stop_reason": None,
                        "content": [{"type": "text", "text": text}],
                    },
                )
            rec(
                "assistant",
                {
                    "id": mid,
                    "role": "assistant",
                    "model": "claude-x",
                    "stop_reason": "tool_use",
                    "content": [{"type": "tool_use", "id": f"t{i}", "name": "Bash", "input": {}}],
                },
            )
            rec("user", {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"t{i}", "content": "ok"}]})
            if kind == "tool2":  # a second call of the same message after the first result
                rec(
                    "assistant",
                    {
                        "id": mid,
                        "role": "assistant",
                        "model": "claude-x",
                        "stop_reason": "tool_use",
                        "content": [{"type": "tool_use", "id": f"t{i}b", "name": "Read", "input": {}}],
                    },
                )
                rec(
                    "user",
                    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"t{i}b", "content": "ok"}]},
                )
        elif kind == "text":
            rec(
                "assistant",
                {
                    "id": f"msg_{i}",
                    "role": "assistant",
                    "model": "claude-x",
                    "stop_reason": stop,
                    "content": [{"type": "text", "text": text}],
                },
            )
        elif kind == "nudge":
            rec("user", {"role": "user", "content": f"Stop hook feedback:\n[stallscan guard]: {NUDGE}"}, isMeta=True)
        elif kind == "other_hook":
            rec("user", {"role": "user", "content": "Stop hook feedback:\n[lint.sh]: run the linter"}, isMeta=True)
        elif kind == "interrupt":
            rec("user", {"role": "user", "content": [{"type": "text", "text": "[Request interrupted by user]"}]})
    return out


def _codex(steps: list[tuple[str, str, str | None]]) -> list[str]:
    out = [json.dumps({"type": "session_meta", "payload": {"id": "cx1", "cwd": "/w"}})]

    def item(payload):
        out.append(json.dumps({"timestamp": "2026-01-01T00:00:00Z", "type": "response_item", "payload": payload}))

    for i, (kind, text, _stop) in enumerate(steps):
        if kind == "human":
            msg = f"please do task {i}"
            out.append(json.dumps({"type": "event_msg", "payload": {"type": "task_started", "turn_id": f"turn{i}"}}))
            item({"type": "message", "role": "user", "content": [{"type": "input_text", "text": msg}]})
            out.append(json.dumps({"type": "event_msg", "payload": {"type": "user_message", "message": msg}}))
        elif kind in ("tool", "tool2"):
            if text:
                item(
                    {
                        "type": "message",
                        "role": "assistant",
                        "phase": "commentary",
                        "content": [{"type": "output_text", "text": text}],
                    }
                )
            item({"type": "function_call", "name": "shell", "arguments": "{}", "call_id": f"c{i}"})
            item({"type": "function_call_output", "call_id": f"c{i}", "output": "ok"})
        elif kind == "text":
            item({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}]})
        elif kind == "nudge":
            item({"type": "message", "role": "user", "content": [{"type": "input_text", "text": NUDGE}]})
        elif kind == "interrupt":
            out.append(json.dumps({"type": "event_msg", "payload": {"type": "turn_aborted", "reason": "interrupted"}}))
    return out


session_st = st.lists(
    st.tuples(STEP, st.sampled_from(TEXTS), st.sampled_from([None, "end_turn", "end_turn", "tool_use", "max_tokens"])),
    min_size=1,
    max_size=18,
).map(lambda steps: [("human", "", None), *steps])


# Each example pays an ingest and a replay (~1 CPU s of fixed cost) and the rules are session-local, so an
# example holds several files: 8 examples of up to 6 + 6 files draw about as many sessions as 25 of up to
# 2 + 2 did, at a third of the cost (STALLSCAN_HYPOTHESIS=full: 25 examples).
EXAMPLES = 25 if os.environ.get("STALLSCAN_HYPOTHESIS") == "full" else 8


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(claude=st.lists(session_st, min_size=1, max_size=6), codex=st.lists(session_st, min_size=0, max_size=6))
def test_guard_and_replay_agree_on_generated_sessions(tmp_path_factory, claude, codex):
    root = tmp_path_factory.mktemp("gen")
    for k, steps in enumerate(claude):
        text = "\n".join(_claude(steps)) + "\n"
        if k >= 2:  # files 0 and 1 share session s1 (and their uuids), the rest each have their own
            text = text.replace('"sessionId": "s1"', f'"sessionId": "s{k}"').replace('"uuid": "u', f'"uuid": "f{k}u')
        (root / f"claude{k}.jsonl").write_text(text, encoding="utf-8")
    for k, steps in enumerate(codex):
        lines = _codex(steps)
        lines[0] = lines[0].replace('"cx1"', f'"cx{k}"')
        (root / f"rollout-{k}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    work = tmp_path_factory.mktemp("cut")
    res = agreement([root], work, every_text_round=True)
    assert not res["_bad"], sorted(res["_bad"])[:10]
