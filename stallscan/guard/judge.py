"""The guard's decision: the replay's own reference classifier applied to the end of the live turn.

`judge(events, last_text, bound)` takes the transcript tail as events (stallscan.guard.transcript) and the
reply the harness is about to deliver (`last_assistant_message`), and returns a Verdict. The round kind
comes from stallscan.replay.stalls_ref.classify_rounds (the plain-Python reference walk the SQL replay is
held to), with the turns segmented by stalls_ref.turn_starts_fallback: the same signatures, vetoes, tail
window and finish-reason rules as `stallscan stalls` / the `rounds` table, read from the same data files.
"""

from __future__ import annotations

from collections import namedtuple
from typing import Any

from stallscan.replay.stall_rules import RETRY_BOUND, StallData, load, strip
from stallscan.replay.stalls_ref import STALL_KINDS, classify_rounds, turn_starts_fallback

NUDGE_ID = "stallscan.guard"


# round_kind: the replay's round_kind for the reply (final, narrated_intent, dropped_tool_call, ...);
# stalls: the guard's own nudges in this turn since the last landed tool call or human prompt;
# stall: round_kind is a stall kind; block: stall and stalls < bound; turn: the record id (or Codex turn id)
# of the turn's human prompt when the window holds it; reply_from: transcript | hook (the reply was not yet
# in the file: the hook's text was appended). A named tuple: no dataclasses / typing import at start-up.
# since: the time of the event that opened the count (the last landed tool call or the human prompt), when
# the window holds it (the hook counts its own logged blocks after it too: stallscan.guard.hook).
Verdict = namedtuple("Verdict", "round_kind signature stalls stall block turn after_tool_round reply_from since")


def nudge_text(data: StallData | None = None) -> str:
    data = data or load()
    for p in data.prompts:
        if p.id == NUDGE_ID:
            return p.text
    raise KeyError(NUDGE_ID)


def _is_own_nudge(ev: dict[str, Any], text: str) -> bool:
    return ev["role"] in ("user", "system") and ev["kind"] != "tool_result" and text in (ev.get("text") or "")


def with_reply(events: list[dict[str, Any]], last_text: str | None) -> tuple[list[dict[str, Any]], str]:
    """The events ending with the reply being delivered: the transcript's last reply when it is that
    reply (or no text was given), else the hook's text appended as a new text-only reply."""
    last = next((e for e in reversed(events) if e["role"] == "assistant"), None)
    at = next((i for i in range(len(events) - 1, -1, -1) if events[i] is last), 0)
    tail_is_reply = last is not None and all(
        e["role"] == "assistant" or e["kind"] not in ("message", "queued_input", "context", "tool_result")
        for e in events[at:]
    )
    if last_text is None:
        return events, "transcript"
    s = strip(last_text)
    if (
        last is not None
        and tail_is_reply
        and last["n_tool_calls"] == 0
        and (strip(last.get("text")) or "").endswith(s or "")
    ):
        return events, "transcript"
    seq = (events[-1]["seq"] + 1) if events else 0
    sid = events[-1]["session_id"] if events else "hook"
    fmt = events[-1]["source_format"] if events else "hook"
    reply: dict[str, Any] = {
        "event_id": f"t{seq:08d}h",
        "seq": seq,
        "session_id": sid,
        "role": "assistant",
        "kind": "message",
        "text": last_text,
        "n_tool_calls": 0,
        "finish_reason": None,
        "finish_norm": None,
        "model": None,
        "source_format": fmt,
        "meta": {},
    }
    return [*events, reply], "hook"


def judge(
    events: list[dict[str, Any]], last_text: str | None, bound: int = RETRY_BOUND, data: StallData | None = None
) -> Verdict | None:
    """The verdict on the turn's last reply, or None when there is no reply to judge."""
    data = data or load()
    events, reply_from = with_reply(events, last_text)
    if not any(e["role"] == "assistant" for e in events):
        return None
    starts = turn_starts_fallback(events, data)
    rounds = classify_rounds(events, starts, data)
    r = rounds[-1]
    # consecutive stalls of this turn: the guard's nudges since the last landed tool call / human prompt
    text = nudge_text(data)
    last_idx = next(i for i in range(len(events) - 1, -1, -1) if events[i]["event_id"] == r["event_id"])
    count = 0
    turn = since = None
    for ev in reversed(events[:last_idx]):
        if ev["event_id"] in starts:
            turn = ev.get("record_id") or ev.get("turn_id")
            since = ev.get("ts")
            break
        if ev["kind"] == "tool_result" or (ev["role"] == "assistant" and ev["n_tool_calls"] > 0):
            since = ev.get("ts")
            break
        if _is_own_nudge(ev, text):
            count += 1
    if turn is None:
        for ev in reversed(events[:last_idx]):
            if ev["event_id"] in starts:
                turn = ev.get("record_id") or ev.get("turn_id")
                break
    if turn is None:
        turn = events[last_idx].get("turn_id")
    stall = r["round_kind"] in STALL_KINDS
    return Verdict(
        r["round_kind"],
        r["signature"],
        count,
        stall,
        stall and count < bound,
        turn,
        bool(r["after_tool_round"]),
        reply_from,
        since,
    )
