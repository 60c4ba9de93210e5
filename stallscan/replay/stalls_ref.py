"""Plain-Python reference walk of the stall rules over ONE session's events (no SQL).

Readable on purpose: one loop per rule, in the harnesses' order. The production replay
(queries/replay/stall_*.sql via stallscan.replay.stalls.replay_stalls) must produce the same rounds, stalls and turns;
tests/functional/test_stalls_reference.py holds the two to agreement on every real file and on generated sessions
(stallscan/replay/stalls_agreement.py lists where they differ).
Events are dicts with the columns of the `events` table (meta as a dict or a JSON string).
"""

from __future__ import annotations

import json
import re
from typing import Any, cast

from stallscan.replay.stall_rules import NARRATED_BOUND, RETRY_BOUND, Prompt, StallData, load, strip

STALL_KINDS = ("dropped_tool_call", "no_tool", "narrated_intent")


def _meta(ev: dict[str, Any]) -> dict[str, Any]:
    m = ev.get("meta")
    if isinstance(m, str):
        m = json.loads(m)
    return m or {}


def _truthy(v: object) -> bool:
    return v is True or (isinstance(v, str) and v.lower() == "true")


def _first_prompt(stripped: str | None, data: StallData, roles: tuple[str, ...]) -> Prompt | None:
    for p in data.prompts:
        if p.role in roles and p.matches(stripped):
            return p
    return None


def turn_starts_fallback(events: list[dict[str, Any]], data: StallData | None = None) -> set[str]:
    """Human turn starts without labels: a user message / queued input with text, not isMeta, not a
    compaction summary, matching no known nudge, automatic prompt or interrupt marker."""
    data = data or load()
    out = set()
    for ev in events:
        if ev["role"] != "user" or ev["kind"] not in ("message", "queued_input"):
            continue
        s = strip(ev.get("text") or "")
        meta = _meta(ev)
        if not s or _truthy(meta.get("isMeta")) or _truthy(meta.get("isCompactSummary")):
            continue
        if any(
            p.role in ("nudge", "automatic", "interrupt")
            and (p.matches(s) if p.match != "contains" else p.text in (ev.get("text") or ""))
            for p in data.prompts
        ):
            continue
        out.add(ev["event_id"])
    return out


def _provider(ev: dict[str, Any], data: StallData) -> str:
    meta = _meta(ev)
    for key in ("provider", "model_provider", "providerId"):
        if meta.get(key) is not None:
            return str(meta[key])
    model = ev.get("model")
    if model is not None:
        for regex, provider in data.providers:
            if re.search(regex, model, re.ASCII):
                return provider
    return "unknown"


def _finish(ev: dict[str, Any]) -> tuple[str | None, str | None]:
    """(effective normalised finish, evidence): Codex phase stands in where no finish reason is logged."""
    phase = _meta(ev).get("phase")
    eff = ev.get("finish_norm") or {"commentary": "tool_calls", "final_answer": "stop"}.get(cast(str, phase))
    evidence = (
        ev.get("finish_reason")
        if ev.get("finish_reason") is not None
        else (None if phase is None else f"phase={phase}")
    )
    return eff, evidence


def _signatures(stripped: str, data: StallData) -> tuple[list[str], list[str], list[str], bool]:
    """(intent hits, vetoes: done / question / statement hits, wait hits, vetoed) in file order. vetoed: a
    question or statement hit, or a done hit where no `decides` intent matched (the last sentence decides)."""
    tail = stripped[-data.tail_chars :] if data.tail_chars else ""
    hits: list[str] = []
    vetoes: list[str] = []
    waits: list[str] = []
    hard = done = decides = False
    for sig in data.signatures:
        if sig.max_chars is not None and len(stripped) > sig.max_chars:
            continue
        if sig.compiled.search(tail):
            {"intent": hits, "wait": waits}.get(sig.kind, vetoes).append(sig.id)
            hard = hard or sig.kind in ("question", "statement")
            done = done or sig.kind == "done"
            decides = decides or (sig.kind == "intent" and sig.decides)
    return hits, vetoes, waits, hard or (done and not decides)


def _background(ev: dict[str, Any], data: StallData) -> str | None:
    """The first [[background]] entry (file order) that one of the reply's calls matches, else None."""
    calls = ev.get("tool_calls") or []
    for b in data.background:
        if any(b.matches(c.get("name"), c.get("arguments")) for c in calls):
            return b.id
    return None


def _approval_mode(ev: dict[str, Any], data: StallData) -> str | None:
    meta = _meta(ev)
    for m in data.approval_modes:
        v = meta.get(m.meta_key)
        if v is not None and str(v) == m.value:
            return m.id
    return None


def classify_rounds(
    events: list[dict[str, Any]], starts: set[str], data: StallData | None = None
) -> list[dict[str, Any]]:
    """One dict per assistant event: turn_id, round_kind, signature and the evidence behind them."""
    data = data or load()
    events = sorted(events, key=lambda e: (e["seq"], e["event_id"]))
    rounds: list[dict[str, Any]] = []
    turn = 0
    background: dict[int, str] = {}  # turn -> the first background call's entry id (calls seen so far)
    modes: dict[int, str] = {}  # turn -> the first plan-approval mode marker seen so far
    for ev in events:
        if ev["event_id"] in starts:
            turn += 1
        if ev["role"] == "assistant":
            rounds.append(
                {
                    "ev": ev,
                    "turn_id": turn,
                    "nudge": None,
                    "n_nudges": 0,
                    "interrupted": False,
                    "background": background.get(turn),
                    "approval_mode": modes.get(turn),
                }
            )
            if ev["n_tool_calls"] > 0 and turn not in background:
                bg = _background(ev, data)
                if bg is not None:
                    background[turn] = bg
            continue
        mode = _approval_mode(ev, data) if turn not in modes else None
        if mode is not None:
            modes[turn] = mode
        if rounds and rounds[-1]["turn_id"] == turn:
            # what followed the last round, before the next round of the same turn
            after = rounds[-1]
            if ev["kind"] == "turn_aborted":
                after["interrupted"] = True
            if ev["role"] == "user" and ev["kind"] != "tool_result":
                s = strip(ev.get("text"))
                nudge = _first_prompt(s, data, ("nudge",))
                if nudge is not None:
                    after["n_nudges"] += 1
                    after["nudge"] = after["nudge"] or nudge
                if _first_prompt(s, data, ("interrupt",)) is not None:
                    after["interrupted"] = True
    out = []
    tool_seen: dict[int, bool] = {}
    in_turn: dict[int, int] = {}
    for r in rounds:
        ev, t = r["ev"], r["turn_id"]
        stripped = strip(ev.get("text"))
        eff, evidence = _finish(ev)
        after_tool = tool_seen.get(t, False)
        in_turn[t] = in_turn.get(t, 0) + 1
        sentinel = _first_prompt(stripped, data, ("sentinel",))
        hits, vetoes, waits, vetoed = (
            _signatures(stripped, data) if ev["n_tool_calls"] == 0 and stripped else ([], [], [], False)
        )
        nudge = r["nudge"]
        # issue 25: a wait is a hand-off only after background work; a first-reply plan only outside a
        # plan-approval mode
        by_text = (
            bool(hits)
            and not vetoed
            and not (waits and r["background"] is not None)
            and (after_tool or r["approval_mode"] is None)
        )
        kind: str | None
        if ev["n_tool_calls"] > 0:
            kind = "tool_round"
        elif sentinel is not None:
            kind = sentinel.reacts_to
        elif r["interrupted"]:
            kind = "cancelled"
        elif eff in ("error", "content_filter"):
            kind = "failed"
        elif eff == "cancelled":
            kind = "cancelled"
        elif not stripped:  # a dropped call can carry no text at all (thinking only): issue 25 class 6
            kind = {"length": "truncated", "tool_calls": "dropped_tool_call"}.get(cast(str, eff), "empty")
        elif eff == "length":
            kind = "truncated"
        elif eff == "tool_calls":
            kind = "dropped_tool_call"
        elif by_text or (nudge is not None and nudge.reacts_to == "narrated"):
            kind = "narrated_intent"
        elif nudge is not None and nudge.reacts_to in ("no_tool", "dropped"):
            kind = "no_tool"
        else:
            kind = "final"
        signature = None
        if kind == "dropped_tool_call":
            signature = f"finish:{evidence}"
        elif kind == "narrated_intent":
            signature = hits[0] if by_text else f"nudge:{nudge.id}"
        elif kind == "no_tool":
            signature = f"nudge:{nudge.id}"
        if ev["n_tool_calls"] > 0:
            tool_seen[t] = True
        out.append(
            {
                "event_id": ev["event_id"],
                "session_id": ev["session_id"],
                "seq": ev["seq"],
                "turn_id": t,
                "round_in_turn": in_turn[t],
                "round_kind": kind,
                "signature": signature,
                "after_tool_round": after_tool,
                "sig_hits": hits,
                "veto_hits": vetoes,
                "wait_hits": waits,
                "vetoed": vetoed,
                "background": r["background"],
                "approval_mode": r["approval_mode"],
                "nudge_id": nudge.id if nudge else None,
                "n_nudges": r["n_nudges"],
                "interrupted": r["interrupted"],
                "provider": _provider(ev, data),
                "model": ev.get("model"),
                "finish_reason": ev.get("finish_reason"),
                "n_tool_calls": ev["n_tool_calls"],
                "source_format": ev["source_format"],
                "ts": ev.get("ts"),
            }
        )
    return out


def walk(
    events: list[dict[str, Any]],
    starts: set[str] | None = None,
    retry_bound: int = RETRY_BOUND,
    narrated_bound: int = NARRATED_BOUND,
    data: StallData | None = None,
) -> dict[str, Any]:
    """Replay one session: {'rounds': [...], 'stalls': [...], 'turns': [...]} (dicts like the SQL tables)."""
    data = data or load()
    if starts is None:
        starts = turn_starts_fallback(events, data)
    rounds = classify_rounds(events, starts, data)
    by_turn: dict[int, list[dict[str, Any]]] = {}
    for r in rounds:
        by_turn.setdefault(r["turn_id"], []).append(r)
    stalls = []
    for _t, rs in by_turn.items():
        # split the turn into episodes: each tool round / genuine final closes the current one
        episodes, cur = [], []
        for r in rs:
            cur.append(r)
            if r["round_kind"] in ("tool_round", "final"):
                episodes.append(cur)
                cur = []
        if cur:
            episodes.append(cur)
        narrated = 0
        for ep_no, ep in enumerate(episodes):
            closer = ep[-1]["round_kind"] if ep[-1]["round_kind"] in ("tool_round", "final") else None
            ep_stalls = [r for r in ep if r["round_kind"] in STALL_KINDS]
            nudges = sum(1 for r in ep_stalls if r["nudge_id"] is not None)
            last = rs[-1]
            if closer == "tool_round":
                outcome = "recovered"
            elif closer == "final":
                outcome = "answered"
            elif last in ep_stalls:
                if last["nudge_id"] is not None:
                    outcome = "abandoned"
                elif nudges > 0:
                    outcome = "exhausted"
                else:
                    outcome = "silent_plan_as_answer"
            else:
                outcome = "abandoned"
            dropped = 0
            for r in ep_stalls:
                if r["round_kind"] == "narrated_intent":
                    narrated += 1
                    index, bound = narrated, narrated_bound
                else:
                    dropped += 1
                    index, bound = dropped, retry_bound
                stalls.append(
                    {
                        **{
                            k: r[k]
                            for k in (
                                "session_id",
                                "turn_id",
                                "seq",
                                "event_id",
                                "round_kind",
                                "signature",
                                "model",
                                "provider",
                                "nudge_id",
                            )
                        },
                        "stall_index": index,
                        "would_do": "re-prompt" if index <= bound else "deliver",
                        "nudged": r["nudge_id"] is not None,
                        "episode": ep_no,
                        "episode_nudges": nudges,
                        "delivered": r is last,
                        "outcome": outcome,
                    }
                )
    turns = _turns(events, starts, by_turn, stalls)
    return {"rounds": rounds, "stalls": stalls, "turns": turns}


def _turns(
    events: list[dict[str, Any]],
    starts: set[str],
    by_turn: dict[int, list[dict[str, Any]]],
    stalls: list[dict[str, Any]],
) -> list[dict[str, Any]]:
    outcome_of = {s["event_id"]: s["outcome"] for s in stalls}
    present, turn = {0}, 0
    start_event: dict[int, str] = {}
    for ev in sorted(events, key=lambda e: (e["seq"], e["event_id"])):
        if ev["event_id"] in starts:
            turn += 1
            start_event[turn] = ev["event_id"]
        present.add(turn)
    out = []
    for t in sorted(present):
        rs = by_turn.get(t, [])
        if t == 0 and not rs:
            continue
        if not rs:
            outcome, last = "no_reply", None
        else:
            last = rs[-1]
            kind = last["round_kind"]
            outcome = outcome_of.get(last["event_id"]) or {"final": "answered", "tool_round": "open"}.get(kind, kind)
        out.append(
            {
                "session_id": events[0]["session_id"],
                "turn_id": t,
                "start_event_id": start_event.get(t),
                "n_rounds": len(rs),
                "n_tool_calls": sum(r_["n_tool_calls"] for r_ in rs),
                "n_stalls": sum(1 for r_ in rs if r_["round_kind"] in STALL_KINDS),
                "delivered_event_id": last["event_id"] if last else None,
                "delivered_round_kind": last["round_kind"] if last else None,
                "outcome": outcome,
            }
        )
    return out
