"""Reference implementation of the router's turn-boundary decision: plain Python over one session.

Slow and obvious on purpose. The production path is queries/replay/turn_boundaries*.sql; tests check that the
two agree on every real file and on generated sessions. Input: the session's events as dicts (columns
of the `events` table) and their origin labels (columns of `user_labels`, keyed by event_id).
"""

from __future__ import annotations

from typing import Any, cast

# the router's gap rule: a user-role record this many seconds or more after the previous final reply starts
# a turn (the default of every --threshold; the rule's SQL takes it as a parameter)
GAP_THRESHOLD_S = 2.0

BLANK = " \t\n\r"


def reply_status(reply: dict[str, Any]) -> str:
    """Completion report of one assistant event, from its own fields."""
    text = reply.get("text") or ""
    finish = reply.get("finish_norm")
    if finish == "length":
        return "truncated"
    if finish == "cancelled" or text.lstrip(" ").startswith("Operation interrupted: "):
        return "cancelled"
    if (
        finish in ("error", "content_filter")
        or reply.get("model") == "<synthetic>"
        or text.lstrip(" ").startswith("API Error")
        or text.strip(" ") == "Failure: I did not provide a response."
    ):
        return "failed"
    if (reply.get("n_tool_calls") or 0) > 0:
        return "tool_calls"
    if text.strip(BLANK) in ("", "(empty)"):
        return "empty"
    return "final"


def gap_seconds(event: dict[str, Any], reply: dict[str, Any]) -> float | None:
    """Seconds from the end of the reply to the event, when both times are per-message; may be negative."""
    if event.get("ts_quality") != "per_message" or reply.get("ts_quality") != "per_message":
        return None
    if event.get("ts") is None or reply.get("ts_end") is None:
        return None
    delta = event["ts"] - reply["ts_end"]
    return cast(float, delta.days * 86400 * 10**6 + delta.seconds * 10**6 + delta.microseconds) / 1e6


def _error(starts_request: bool, is_human_turn: bool, decision: str | None) -> str | None:
    if not starts_request:
        return "not_request"
    if decision is None:
        return None
    if is_human_turn and decision == "continuation":
        return "human_as_auto"
    if not is_human_turn and decision == "human":
        return "auto_as_human"
    return "none"


def replay_session(
    events: list[dict[str, Any]], labels: dict[str, dict[str, Any]], threshold: float = GAP_THRESHOLD_S
) -> list[dict[str, Any]]:
    """One decision per user-role (or tool) event of a session, in seq order."""
    out = []
    prev_reply = None
    for ev in sorted(events, key=lambda e: e["seq"]):
        if ev["role"] == "assistant":
            prev_reply = ev
            continue
        if ev["role"] not in ("user", "tool"):
            continue
        label = labels[ev["event_id"]]
        status = reply_status(prev_reply) if prev_reply else None
        raw_gap = gap_seconds(ev, prev_reply) if prev_reply else None
        gap = raw_gap if raw_gap is not None and raw_gap >= 0 else None
        header = ev.get("initiator") if ev.get("initiator") in ("user", "agent") else None

        # 1. header, 2. first message, 3. completion report, 4. gap (or no trustworthy time)
        if header:
            decided_by, decision = "header", ("human" if header == "user" else "continuation")
        elif prev_reply is None:
            decided_by, decision = "first", "human"
        elif status != "final":
            decided_by, decision = "completion", "continuation"
        elif gap is None:
            decided_by, decision = "no_time", "human"
        else:
            decided_by, decision = "gap", ("human" if gap >= threshold else "continuation")

        if prev_reply is None:
            gap_only = "human"
        elif gap is not None:
            gap_only = "human" if gap >= threshold else "continuation"
        else:
            gap_only = None
        header_only = None if header is None else ("human" if header == "user" else "continuation")

        is_human = label["origin"] == "human" or bool(label["human_content"])
        starts = bool(label["starts_request"])
        out.append(
            {
                "event_id": ev["event_id"],
                "seq": ev["seq"],
                "gap_s": gap,
                "gap_raw_s": raw_gap,
                "prev_reply_status": status,
                "decided_by": decided_by,
                "decision": decision,
                "origin": label["origin"],
                "is_human_turn": is_human,
                "error": _error(starts, is_human, decision),
                "gap_only_decision": gap_only,
                "gap_only_error": _error(starts, is_human, gap_only),
                "header_only_decision": header_only,
                "header_only_error": _error(starts, is_human, header_only),
            }
        )
    return out
