"""Synthetic one-turn sessions for hand-written endings (tests/truth/intent_cases.csv `setting`), shared by
tests/test_intent_cases.py and tests/real/intent_truth.py. The reply under test is always the session's last
event (seq = len(steps)); what comes before it is the evidence the setting names:

  after_tool         a prompt, one tool round (read_file) and its result: the case narrated_intent was made for
  background         the same with the call that starts background work (Claude Code Bash run_in_background)
  first_reply        the prompt only: the reply is the turn's first (issue 25 class 1)
  plan_mode          the prompt marked permissionMode = plan (Claude Code plan mode), then the reply
  finish_tool_calls  after a tool round, a reply whose finish reason says tool_calls with no call (class 6)
"""

from __future__ import annotations

import json
from typing import Any

SETTINGS = ("after_tool", "background", "first_reply", "plan_mode", "finish_tool_calls")
_READ = {"id": "c0", "name": "read_file", "arguments": "{}"}
_BG = {"id": "c0", "name": "Bash", "arguments": json.dumps({"command": "make test", "run_in_background": True})}


def steps(text: str, setting: str = "after_tool") -> list[tuple[str, str, str | None, list, str | None, dict]]:
    """(role, kind, text, calls, finish, meta) of the session, the reply last."""
    if setting not in SETTINGS:
        raise ValueError(f"unknown setting {setting!r}")
    prompt_meta = {"permissionMode": "plan"} if setting == "plan_mode" else {}
    out: list[tuple[str, str, str | None, list, str | None, dict]] = [
        ("user", "message", "please carry on with the task", [], None, prompt_meta)
    ]
    if setting not in ("first_reply", "plan_mode"):
        call = _BG if setting == "background" else _READ
        out += [("assistant", "message", None, [call], "tool_calls", {}), ("tool", "tool_result", "ok", [], None, {})]
    finish = "tool_calls" if setting == "finish_tool_calls" else "stop"
    out.append(("assistant", "message", text, [], finish, {}))
    return out


def insert(con: Any, cases: list[tuple[str, str, str]], fmt: str = "openai_chat") -> dict[str, str]:
    """Insert one session per (key, text, setting) into `events`; returns key -> the reply's event_id."""
    rows, reply = [], {}
    for key, text, setting in cases:
        st = steps(text, setting)
        for seq, (role, kind, t, calls, fr, meta) in enumerate(st, 1):
            eid = f"{key}-{seq}"
            rows.append(
                (eid, fmt, f"/truth/{key}.jsonl", seq, seq, 0, 1, f"truth-{key}", seq, None, None, "none", role,
                 kind, t, calls, len(calls), None, fr, fr, None, None, None, None, None,
                 "truth-model" if role == "assistant" else None, False, None, None, json.dumps(meta))
            )  # fmt: skip
        reply[key] = f"{key}-{len(st)}"
    con.executemany("INSERT INTO events VALUES (" + ",".join(["?"] * 30) + ")", rows)
    return reply
