"""The blocks around the sections: the answer that opens every report (headline cards and the worst
examples), the options line, and the listed sessions' timelines (HTML). Drawn from the report data alone."""

from __future__ import annotations

from typing import Any

from stallscan.report.blocks import Block, Card, Column, Example, Examples, Heading, Headline, Paragraph, Table
from stallscan.report.cells import anchor, num
from stallscan.report.headline import duration
from stallscan.report.timeline import who

ANSWER = "The answer"


def answer_blocks(data: dict[str, Any], full: bool) -> list[Block]:
    h = data.get("headline") or {"items": [], "examples": []}
    cards = [_card(it if full else {**it, "text": it.get("short") or it["text"]}) for it in h["items"]]
    out: list[Block] = [Heading(ANSWER, 2, "answer"), Headline(cards)]
    if h["examples"]:
        have = set(data.get("timelines") or {})
        items = [
            Example(
                e["kind"],
                e["harness"],
                e["why"],
                e["show"],
                e["excerpt"] or "",
                anchor(e["session_id"]) if e["session_id"] in have else "",
            )
            for e in h["examples"]
        ]
        out += [Heading("Worst examples", 3, "examples"), Examples(items)]
    if full:
        o = data.get("options") or {}
        filters = [f"{k} {num(o[k])}" for k in ("since", "until", "harness", "model") if o.get(k)]
        out.append(
            Paragraph(
                f"Threshold {num(o.get('threshold'))} s, retry bound {num(o.get('retry_bound'))}, "
                f"bootstrap {num(o.get('bootstrap'))} resamples; filters: {', '.join(filters) or 'none'}."
            )
        )
    return out


def _card(it: dict[str, Any]) -> Card:
    """A headline item as a card: the sentence, and the figure with its context (by the item's key)."""
    key, big, sub, tone = it["key"], str(it.get("value", "")), "", ""
    if key == "silent":
        big, sub = f"{it['per_1000']:.1f} per 1,000 turns", f"{num(it['silent'])} of {num(it['turns'])} turns"
        w = it.get("worst_harness")
        if w:
            sub += f"; worst harness {w['key']} ({num(w['silent'])} of {num(w['turns'])})"
    elif key == "misread":
        big = f"{num(it['misread'])} misread turns"
        sub = (
            f"of {num(it['records'])} at {num(it['threshold'])} s: {num(it['auto_as_human'])} automatic read as "
            f"human, {num(it['human_as_auto'])} human read as automatic"
        )
    elif key == "recommendation":
        big = f"set {num(it['set_threshold'])} s"
        iv, pl = it.get("interval"), it.get("plateau")
        sub = it["verdict"] + (f": lowest cost on {pl[0]:.2f}–{pl[1]:.2f} s" if pl else "")
        sub += f" (95% {iv[0]:.2f}–{iv[1]:.2f} s)" if iv else ""
        sub += f", {num(it['errors'])} errors; current {num(it['current_threshold'])} s"
        tone = it["verdict"] if it["verdict"] in ("keep", "move") else ""
    elif key == "rule_change" and it.get("removed"):
        sub = f"removes {num(it['removed'])} of the router's errors, adds {num(it['added'])}"
    elif key == "rule_change":
        sub = "no variant lowers the router's cost"
    return Card(it["label"], it["text"], big, sub, tone)


def timeline_blocks(data: dict[str, Any]) -> list[Block]:
    """The sessions the report lists, near what they flag (present when the HTML asked for them)."""
    if not data.get("timelines"):
        return []
    out: list[Block] = [
        Heading("Session timelines", 2, "timelines"),
        Paragraph("The sessions listed above, near what they flag (3 events either side)."),
    ]
    cols = [Column("line", keep=85), Column("time (UTC)", "id", 60), Column("gap", keep=80)]
    cols += [Column("role", "id", 90), Column("origin / round", "text", 70, min=9, max=24)]
    cols += [Column("decision", "text", 88, min=10, max=24), Column("flag", "text", 95, min=12, max=40)]
    cols += [Column("text", "text", 75, min=12, max=60)]
    for sid, tl in data["timelines"].items():
        rows = []
        for r in tl["rows"]:
            flag = []
            if r["error"] in ("auto_as_human", "human_as_auto"):
                flag.append(r["error"].replace("_as_", " as "))
            if r["stall_outcome"]:
                flag.append(f"stall {r['stall_index']}: {r['stall_outcome']}")
            rows.append(
                [
                    num(r["line"]),
                    (r["ts"] or "–")[:23].replace("T", " "),
                    "" if r["gap_s"] is None else duration(r["gap_s"]),
                    r["role"],
                    who(r),
                    f"{r['decision']} ({r['decided_by']})" if r["decision"] else "",
                    "; ".join(flag),
                    num(r["excerpt"])[:140],
                ]
            )
        ref = (data.get("session_refs") or {}).get(sid, sid)
        note = f"`stallscan show {ref}` prints all {num(tl['events'])} events"
        if tl["skipped"]:
            note += f" ({num(tl['skipped'])} not shown here)"
        out += [
            Heading(f"Session {sid}", 3, anchor(sid)),
            Paragraph(note + "."),
            Table(cols, rows, flagged=[bool(r[6]) for r in rows], wide=True),
        ]
    return out
