#!/usr/bin/env python3
"""Validate the sample transcripts and print the gaps / expected findings used in README.md.

Stdlib only:  python sample_logs/check_samples.py  (exit 1 on any mismatch)

* every line of every *.jsonl parses with json.loads and is an object;
* timestamps carry a zone and never go backwards inside a session;
* for every role:user message in the Hermes/OpenAI samples: the gap from the previous assistant
  record, that reply's completion status, the hand-assigned truth (human / automatic) and what the
  router rule decides at 2.0 s: x-initiator header first, then the previous reply's completion status
  (not final => automatic), then gap >= 2.0 s after a final reply => human.  "gap only" is the
  2.0 s rule alone (no header, no status), shown for contrast;
* every dropped tool call (finish_reason tool_calls, no calls) and what followed it.
The claimed gaps below are asserted against the timestamps.
"""
from __future__ import annotations

import json
import sys
from datetime import datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
THR = 2.0
NUDGE = ("Your previous turn indicated a tool call but none was included. Do not narrate a plan "
         "or restate intent \u2014 issue the actual tool call now to continue the task.")

# (file, session index, user-message index within the session) -> (truth, claimed gap or None)
EXPECTED = {
    ("narration_then_call.jsonl", 0, 0): ("human", None),
    ("narration_forever.jsonl", 0, 0): ("human", None),
    ("narration_nudged_exhausted.jsonl", 0, 0): ("human", None),
    ("narration_nudged_exhausted.jsonl", 0, 1): ("automatic", 0.087),
    ("narration_nudged_exhausted.jsonl", 0, 2): ("automatic", 0.142),
    ("narration_nudged_exhausted.jsonl", 0, 3): ("automatic", 0.063),
    ("narration_nudged_exhausted.jsonl", 0, 4): ("human", 40.000),
    ("normal_session.jsonl", 0, 0): ("human", None),
    ("normal_session.jsonl", 0, 1): ("human", 35.412),
    ("continue_prompts.jsonl", 0, 0): ("human", None),
    ("continue_prompts.jsonl", 0, 1): ("automatic", 0.300),
    ("continue_prompts.jsonl", 0, 2): ("automatic", 0.400),
    ("continue_prompts.jsonl", 0, 3): ("automatic", 1.200),
    ("continue_prompts.jsonl", 0, 4): ("automatic", 13.800),
    ("continue_prompts.jsonl", 0, 5): ("human", 0.900),
    ("continue_prompts.jsonl", 0, 6): ("human", 25.000),
    ("initiator_header.jsonl", 0, 0): ("human", None),
    ("initiator_header.jsonl", 0, 1): ("automatic", 5.043),
    ("initiator_header.jsonl", 0, 2): ("human", 1.730),
    ("truncated_and_empty.jsonl", 0, 0): ("human", None),
    ("truncated_and_empty.jsonl", 0, 1): ("automatic", 3.000),
    ("truncated_and_empty.jsonl", 0, 2): ("human", 48.260),
    ("truncated_and_empty.jsonl", 0, 3): ("automatic", 4.000),
    ("conversations.jsonl", 0, 0): ("human", None),
    ("conversations.jsonl", 1, 0): ("human", None),
    ("conversations.jsonl", 1, 1): ("automatic", 0.112),
}

errors: list[str] = []


def ts(s: str) -> datetime:
    d = datetime.fromisoformat(s.replace("Z", "+00:00"))
    if d.tzinfo is None:
        errors.append(f"timestamp without zone: {s}")
    return d


def load(path: Path) -> list[dict]:
    out = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        try:
            d = json.loads(line)
        except json.JSONDecodeError as e:
            errors.append(f"{path.name}:{n}: invalid JSON: {e}")
            continue
        if not isinstance(d, dict):
            errors.append(f"{path.name}:{n}: not an object")
        out.append(d)
    return out


def calls(m: dict) -> list:
    return m.get("tool_calls") or []


def is_final(m: dict) -> bool:
    return m.get("finish_reason") == "stop" and not calls(m) and bool((m.get("content") or "").strip())


def status(m: dict | None) -> str:
    if m is None:
        return "-"
    if calls(m):
        return "tool_calls"
    if not (m.get("content") or "").strip():
        return f"empty ({m.get('finish_reason')})"
    if m.get("finish_reason") == "stop":
        return "final"
    return f"not final ({m.get('finish_reason')}, no calls)"


def hermes_sessions(path: Path) -> list[list[dict]]:
    """Sessions as lists of (file line, message)."""
    recs = load(path)
    if recs and "messages" in recs[0]:
        return [[(n, m) for m in r["messages"]] for n, r in enumerate(recs, 1)]
    return [[(n, r) for n, r in enumerate(recs, 1) if r.get("role") != "session_meta"]]


def check_hermes() -> tuple[list[str], list[str]]:
    rows, stalls = [], []
    for path in sorted((HERE / "hermes").glob("*.jsonl")):
        for si, lmsgs in enumerate(hermes_sessions(path)):
            lines = [n for n, _ in lmsgs]
            msgs = [m for _, m in lmsgs]
            prev_t = None
            for m in msgs:
                t = ts(m["timestamp"])
                if prev_t and t < prev_t:
                    errors.append(f"{path.name}: time goes backwards at {m['timestamp']}")
                prev_t = t
            last_asst = None
            ui = 0
            for i, m in enumerate(msgs):
                role = m["role"]
                if role == "assistant":
                    if m.get("finish_reason") == "tool_calls" and not calls(m):
                        nxt = msgs[i + 1] if i + 1 < len(msgs) else None
                        if nxt is None:
                            what = "EOF: plan-as-answer (silent)"
                        elif nxt["role"] == "user" and nxt["content"] == NUDGE:
                            what = f"Hermes nudge after {(ts(nxt['timestamp']) - ts(m['timestamp'])).total_seconds():.3f} s"
                        elif nxt["role"] == "user":
                            what = "next is a human message: plan-as-answer (exhausted / delivered)"
                        elif nxt["role"] == "assistant" and calls(nxt):
                            what = "next round makes the call without a nudge: recovered"
                        else:
                            what = f"next: {nxt['role']}"
                        where = (f"L{lines[i]} msg {i + 1}" if path.name == "conversations.jsonl" else f"L{lines[i]}")
                        stalls.append(f"| {path.name} | {where} | {m['content']!r} | "
                                      f"{'absent' if 'tool_calls' not in m else json.dumps(m['tool_calls'])} | {what} |")
                    last_asst = m
                    continue
                if role != "user":
                    continue
                key = (path.name, si, ui)
                ui += 1
                gap = None if last_asst is None else (ts(m["timestamp"]) - ts(last_asst["timestamp"])).total_seconds()
                hdr = m.get("x-initiator")
                if hdr:
                    rule, dec = "header", ("human" if hdr == "user" else "automatic")
                elif last_asst is None:
                    rule, dec = "first message", "human"
                elif not is_final(last_asst):
                    rule, dec = "status", "automatic"
                else:
                    rule, dec = "gap", ("human" if gap >= THR else "automatic")
                gonly = "human" if gap is None or gap >= THR else "automatic"
                if key not in EXPECTED:
                    errors.append(f"no expectation for {key}")
                    continue
                truth, claimed = EXPECTED[key]
                if claimed is not None and (gap is None or abs(gap - claimed) > 0.0005):
                    errors.append(f"{key}: claimed gap {claimed} but timestamps give {gap}")
                text = m["content"].replace("\n", " ")
                text = text if len(text) <= 60 else text[:57] + "..."
                where = f"L{lines[i]}" + (f" msg {i + 1}" if path.name == "conversations.jsonl" else "")
                rows.append(f"| {path.name} {where} | {text!r} | {hdr or ''} | {status(last_asst)} | "
                            f"{'' if gap is None else f'{gap:.3f}'} | {truth} | {dec} ({rule}) | "
                            f"{'ok' if dec == truth else '**MISCLASSIFIED**'} | "
                            f"{'ok' if gonly == truth else 'wrong'} |")
    return rows, stalls


def check_claude() -> list[str]:
    path = HERE / "claude-code" / "session.jsonl"
    recs = load(path)
    out = []
    last_asst_t = None
    for n, r in enumerate(recs, 1):
        if "timestamp" not in r:
            continue
        t = ts(r["timestamp"])
        typ = r["type"]
        if typ == "assistant":
            last_asst_t = t
        elif typ == "user":
            c = r["message"]["content"]
            is_tr = isinstance(c, list) and any(b.get("type") == "tool_result" for b in c)
            if not is_tr and last_asst_t is not None:
                g = (t - last_asst_t).total_seconds()
                out.append(f"| claude-code/session.jsonl L{n} | user{' isMeta' if r.get('isMeta') else ''} | "
                           f"{c.splitlines()[0]!r} | {g:.3f} |")
        elif typ == "queue-operation" and r["operation"] == "enqueue" and last_asst_t is not None:
            out.append(f"| claude-code/session.jsonl L{n} | queue-operation enqueue (human, typed during tool run) | "
                       f"{r['content']!r} | {(t - last_asst_t).total_seconds():.3f} |")
    ids = [r["message"]["id"] for r in recs if r.get("type") == "assistant"]
    if len(ids) != 4 or len(set(ids)) != 3:
        errors.append("claude sample: expected 4 assistant lines / 3 message ids")
    return out


def check_codex() -> list[str]:
    path = HERE / "codex" / "rollout.jsonl"
    recs = load(path)
    prev = None
    for r in recs:
        t = ts(r["timestamp"])
        if prev and t < prev:
            errors.append("codex sample: time goes backwards")
        prev = t
    users = [r for r in recs if r["type"] == "response_item" and r["payload"].get("role") == "user"]
    evs = {r["payload"]["message"] for r in recs if r["type"] == "event_msg" and r["payload"]["type"] == "user_message"}
    out = []
    for r in users:
        text = r["payload"]["content"][0]["text"]
        out.append(f"| codex/rollout.jsonl | user response_item | {text.splitlines()[0][:50]!r} | "
                   f"{'paired with event_msg/user_message: human' if text in evs else 'unpaired: harness context'} |")
    tcs = [json.dumps(r["payload"]) for r in recs if r["type"] == "event_msg" and r["payload"]["type"] == "token_count"]
    dup = sum(1 for a, b in zip(tcs, tcs[1:]) if a == b)
    fin = [r for r in recs if r["type"] == "response_item" and r["payload"].get("phase") == "final_answer"]
    done = [r for r in recs if r["type"] == "event_msg" and r["payload"]["type"] == "task_complete"]
    g = (ts(done[0]["timestamp"]) - ts(fin[0]["timestamp"])).total_seconds()
    out.append(f"| codex/rollout.jsonl | token_count | {len(tcs)} lines, {dup} consecutive identical repeat(s) | |")
    out.append(f"| codex/rollout.jsonl | final_answer -> task_complete | | {g:.3f} s |")
    return out


def main() -> int:
    for p in sorted(HERE.rglob("*.jsonl")):
        load(p)
    rows, stalls = check_hermes()
    print("## User messages (Hermes / OpenAI samples)\n")
    print("| file | user message | x-initiator | previous reply | gap s | truth | router @2.0 s (rule) | router | gap-only @2.0 s |")
    print("|---|---|---|---|---|---|---|---|---|")
    print("\n".join(rows))
    print("\n## Dropped tool calls (finish_reason tool_calls, no calls)\n")
    print("| file | where | narration | tool_calls field | what follows |")
    print("|---|---|---|---|---|")
    print("\n".join(stalls))
    print("\n## Claude Code / Codex samples\n")
    print("| file | record | text | gap s from previous assistant line |")
    print("|---|---|---|---|")
    print("\n".join(check_claude()))
    print("\n".join(check_codex()))
    if errors:
        print("\nERRORS:", *errors, sep="\n  ", file=sys.stderr)
        return 1
    print(f"\nall {sum(1 for _ in HERE.rglob('*.jsonl'))} files OK", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
