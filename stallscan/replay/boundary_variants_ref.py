"""Reference implementation of the router's rule variants: plain Python over one session.

Slow and obvious on purpose. The production path is queries/replay/turn_boundaries_variants.sql; tests check
that the two agree on every real file and on generated sessions. Input: the session's events (columns of
`events`), their labels (columns of `user_labels`, keyed by event_id), the router's decisions for the
session (stallscan.replay.boundaries_ref.replay_session) and the rules (boundary_variants.rule_entries()).
"""

from __future__ import annotations

from typing import Any

from stallscan.replay.boundaries_ref import _error


def _applies(rule: dict[str, Any], source_format: str) -> bool:
    return rule["harness"] is None or any(source_format.startswith(h) for h in rule["harness"])


def _own_marker(ev: dict[str, Any], label: dict[str, Any] | None, rules: list[dict[str, Any]]) -> str | None:
    """The id of the first marker rule (by id) this event is itself."""
    hits = []
    for r in rules:
        if r["rule_set"] != "marker" or not _applies(r, ev["source_format"]):
            continue
        if r["match"] == "kind" and ev.get("kind") == r["value"]:
            hits.append(r["id"])
        if r["match"] == "rule" and ev["role"] == "user" and label and label.get("origin_rule") == r["value"]:
            hits.append(r["id"])
    return min(hits) if hits else None


def _order(router: dict[str, Any], marked: bool, automatic: bool, use_marker: bool, use_auto: bool) -> tuple[str, str]:
    """(step, decision): the router's header first, then the known-automatic rule, then first message, then
    the marker rule, then the router's own completion / gap / no_time steps."""
    step = router["decided_by"]
    if step == "header":
        return "header", router["decision"]
    if use_auto and automatic:
        return "notification", "continuation"
    if use_marker and marked and step != "first":
        return "marker", "human"
    return step, router["decision"]


def variants_session(
    events: list[dict[str, Any]],
    labels: dict[str, dict[str, Any]],
    router: list[dict[str, Any]],
    rules: list[dict[str, Any]],
) -> list[dict[str, Any]]:
    """Per router row (user-role event or tool result) of the session: the markers, the known-automatic flag
    and each variant's step, decision and error."""
    decided = {r["event_id"]: r for r in router}
    out = []
    first_marker = None  # the first marker record since the last assistant reply
    for ev in sorted(events, key=lambda e: e["seq"]):
        if ev["role"] == "assistant":
            first_marker = None
            continue
        own = _own_marker(ev, labels.get(ev["event_id"]), rules)
        if first_marker is None:
            first_marker = own
        if ev["role"] not in ("user", "tool"):
            continue
        r = decided[ev["event_id"]]
        label = labels[ev["event_id"]]
        is_user = ev["role"] == "user"
        status_marks = sorted(
            x["id"]
            for x in rules
            if x["rule_set"] == "marker"
            and x["match"] == "reply_status"
            and x["value"] == r["prev_reply_status"]
            and _applies(x, ev["source_format"])
        )
        marker_id = (status_marks[0] if status_marks else first_marker) if is_user else None
        automatic = is_user and any(
            x["rule_set"] == "automatic"
            and x["match"] == "rule"
            and x["value"] == label.get("origin_rule")
            and _applies(x, ev["source_format"])
            for x in rules
        )
        marked = marker_id is not None

        row = {"event_id": ev["event_id"], "seq": ev["seq"], "marker_seen": marked, "marker_id": marker_id}
        row["known_automatic"] = automatic
        starts, human = bool(label["starts_request"]), r["is_human_turn"]
        for prefix, use_marker, use_auto in (("marker", True, False), ("notif", False, True), ("both", True, True)):
            by, decision = _order(r, marked, automatic, use_marker, use_auto)
            row[f"{prefix}_decided_by"] = by
            row[f"{prefix}_decision"] = decision
            row[f"{prefix}_error"] = _error(starts, human, decision)
        out.append(row)
    return out
