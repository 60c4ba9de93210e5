"""The report as a document: a list of blocks both Markdown and HTML render (same words, same numbers).

Blocks are tuples: ("h", level, id, title) · ("p", text) · ("table", headers, rows, opts) ·
("list", items) · ("examples", items) · ("chart", name) · ("details", summary, blocks).
Cells are plain strings, already formatted in one style (integers with thousands separators, seconds
with two decimals, rates with one). A section this module does not know (registered by another part of
stallscan) is laid out generically: scalars as a two-column table, lists of records as tables.
"""

from __future__ import annotations

from typing import Any

from stallscan.report.headline import duration
from stallscan.report.render import unknown_shape_line
from stallscan.report.render_sweep import left_out_note

TITLES = {"corpus": "Corpus", "boundaries": "Turn boundaries", "stalls": "Stalls", "threshold": "Threshold"}
CURVE_AT = (0.25, 0.5, 1.0, 1.5, 2.0, 3.0, 5.0, 10.0, 30.0)


def num(v: Any) -> str:
    if v is None:
        return "–"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, int):
        return f"{v:,}"
    if isinstance(v, float):
        if v.is_integer() and abs(v) < 1e15:
            return f"{int(v):,}"
        return f"{v:,.2f}"
    if isinstance(v, (list, tuple)):
        return ", ".join(num(x) for x in v)
    if isinstance(v, dict):
        return "; ".join(f"{k} {num(x)}" for k, x in v.items())
    return " ".join(str(v).split())


def secs(v: float | None) -> str:
    return "–" if v is None else f"{v:.2f}"


def pct(v: float | None) -> str:
    return "–" if v is None else f"{v:.0%}"


def anchor(sid: str) -> str:
    """The HTML id of a session's timeline."""
    return "s-" + "".join(c if c.isalnum() else "-" for c in sid)


def document(data: dict[str, Any]) -> list[tuple[Any, ...]]:
    out: list[tuple[Any, ...]] = [("h", 2, "answer", "The answer")]
    h = data.get("headline") or {"items": [], "examples": []}
    out.append(("cards", h["items"]))
    out.append(("list", [f"**{it['label']}**: {it['text']}" for it in h["items"]]))
    if h["examples"]:
        out.append(("h", 3, "examples", "Worst examples"))
        out.append(("examples", h["examples"]))
    o = data.get("options") or {}
    filters = [f"{k} {num(o[k])}" for k in ("since", "until", "harness", "model") if o.get(k)]
    out.append(
        (
            "p",
            f"Threshold {num(o.get('threshold'))} s, retry bound {num(o.get('retry_bound'))}, "
            f"bootstrap {num(o.get('bootstrap'))} resamples; filters: {', '.join(filters) or 'none'}.",
        )
    )
    builders = {"corpus": _corpus, "boundaries": _boundaries, "stalls": _stalls, "threshold": _threshold}
    skip = {"report_version", "headline", "options", "session_refs", "timelines"}
    for key in list(TITLES) + [k for k in data if k not in TITLES and k not in skip]:
        if key not in data or key in skip:
            continue
        out.append(("h", 2, key, TITLES.get(key, key.replace("_", " ").capitalize())))
        out.extend(builders.get(key, _generic)(data[key], data))
    if data.get("timelines"):
        out.append(("h", 2, "timelines", "Session timelines"))
        out.append(("p", "The sessions listed above, near what they flag (3 events either side)."))
        for sid, tl in data["timelines"].items():
            out.append(("h", 3, anchor(sid), f"Session {sid}"))
            out.extend(_timeline(sid, tl, data))
    return out


def _ref(data: dict[str, Any], sid: str) -> str:
    return str((data.get("session_refs") or {}).get(sid, sid))


def _corpus(d: dict[str, Any], data: dict[str, Any]) -> list[tuple[Any, ...]]:
    rows = [
        [
            h["harness"],
            num(h["files"]),
            num(h["sessions"]),
            num(h["events"]),
            num(h["user_messages"]),
            num(h["replies"]),
            num(h["tool_calls"]),
            (h["first_ts"] or "–")[:10],
            (h["last_ts"] or "–")[:10],
        ]
        for h in d["by_harness"]
    ]
    t = d["totals"]
    rows.append(
        [
            "**total**",
            num(t["files"]),
            num(t["sessions"]),
            num(t["events"]),
            num(t["user_messages"]),
            num(t["replies"]),
            num(t["tool_calls"]),
            "",
            "",
        ]
    )
    rej = sum(r["lines"] for r in d["rejects"])
    out: list[tuple[Any, ...]] = [
        (
            "table",
            ["harness", "files", "sessions", "events", "user msgs", "replies", "tool calls", "from", "to"],
            rows,
            {},
        ),
        (
            "p",
            "Files by status: "
            + ", ".join(f"{k} {num(v)}" for k, v in d["files_by_status"].items())
            + f". Rejected lines: {num(rej)}. Skipped lines: {num(sum(d['skipped'].values()))} "
            f"({num(len(d['skipped']))} kinds: metadata, progress and snapshot records that are not events).",
        ),
    ]
    out += [("p", unknown_shape_line(u)) for u in d.get("unknown_shapes", [])]
    if d["rejects"]:
        out.append(("table", ["reject reason", "lines"], [[r["reason"], num(r["lines"])] for r in d["rejects"]], {}))
    if d["skipped"]:
        out.append(
            (
                "details",
                f"Skipped lines by kind ({num(len(d['skipped']))} kinds)",
                [("table", ["kind", "lines"], [[k, num(v)] for k, v in d["skipped"].items()], {})],
            )
        )
    return out


def _boundaries(d: dict[str, Any], data: dict[str, Any]) -> list[tuple[Any, ...]]:
    m = d["misread"]
    t, p, tr = m["turns"], m["prompts"], m["tool_results"]
    out: list[tuple[Any, ...]] = [
        (
            "p",
            f"At {num(d['threshold'])} s the router misreads {num(t['misread'])} of the {num(t['records'])} "
            f"user-role records that start a request (tool results included): {num(t['auto_as_human'])} automatic "
            f"read as human, {num(t['human_as_auto'])} human read as automatic. {num(p['misread'])} of them are "
            f"among the {num(p['records'])} prompts (the population the threshold sweep scores), "
            f"{num(tr['misread'])} among the {num(tr['records'])} tool results.",
        ),
        ("h", 3, "rules", "Router decisions by rule"),
        (
            "table",
            ["decided by", "records", "auto as human", "human as auto"],
            [[k, num(v["n"]), num(v["auto_as_human"]), num(v["human_as_auto"])] for k, v in d["decided_by"].items()],
            {},
        ),
        ("h", 3, "confusion", "Truth x decision (records that start a request)"),
    ]
    rows = []
    for policy, cells in d["confusion"].items():
        for truth, c in sorted(cells.items()):
            wrong = c["continuation"] if truth == "human" else c["human"]
            rows.append([policy, truth, num(c["human"]), num(c["continuation"]), num(c["undecided"]), num(wrong)])
    out.append(("table", ["policy", "truth", "→ human", "→ continuation", "undecided", "errors"], rows, {}))
    if d["misclassified"]:
        out.append(("h", 3, "misread", "Misread turns, worst first"))
        rows = [
            [
                f"[{_ref(data, r['session_id'])}](#{anchor(r['session_id'])})",
                num(r["line"]),
                (r["ts"] or "–")[:16].replace("T", " "),
                "–" if r["gap_s"] is None else duration(r["gap_s"]),
                r["prev_reply_status"] or "–",
                r["decided_by"],
                r["origin_rule"],
                r["error"].replace("_as_", " as "),
                num(r["excerpt"])[:120],
            ]
            for r in d["misclassified"]
        ]
        out.append(
            (
                "table",
                ["session", "line", "time (UTC)", "gap", "prev reply", "decided by", "truth rule", "error", "excerpt"],
                rows,
                {"wide": True},
            )
        )
    out.append(("h", 3, "gaps", "Gap after a final reply"))
    out.append(("chart", "gaps"))
    if d["gap_histogram"]:
        origins = sorted(d["gap_histogram"])
        bins = d["gap_histogram"][origins[0]]
        rows = [
            [f"{num(b['lo'])}–{num(b['hi'])} s" if b["hi"] is not None else f"≥ {num(b['lo'])} s"]
            + [num(d["gap_histogram"][o][i]["n"]) for o in origins]
            for i, b in enumerate(bins)
        ]
        out.append(("details", "Gap histogram as a table", [("table", ["gap"] + origins, rows, {})]))
    nr = d.get("not_requests") or []
    if nr:
        out.append(
            (
                "p",
                f"Not judged: {num(d['records']['not_requests'])} user-role records that are not a model "
                "request of their own ("
                + ", ".join(f"{r['origin_rule']} {num(r['n'])}" for r in nr[:8])
                + (", …" if len(nr) > 8 else "")
                + ").",
            )
        )
    return out


def _stalls(d: dict[str, Any], data: dict[str, Any]) -> list[tuple[Any, ...]]:
    turns = {r["key"]: r["turns"] for r in d["rates"]["harness"]}
    rows = []
    for h, c in sorted(d["counts"].items()):
        rk, so = c.get("round_kind", {}), c.get("stall_outcome", {})
        rows.append(
            [
                h,
                num(turns.get(h, 0)),
                num(sum(rk.values())),
                num(rk.get("dropped_tool_call", 0)),
                num(rk.get("no_tool", 0)),
                num(rk.get("narrated_intent", 0)),
                num(so.get("silent_plan_as_answer", 0)),
                num(so.get("exhausted", 0)),
                num(so.get("recovered", 0)),
                num(so.get("abandoned", 0)),
            ]
        )
    out: list[tuple[Any, ...]] = [
        ("p", f"Retry bound {d['retry_bound']}, narrated bound {d['narrated_bound']}, turns from {d['segmentation']}."),
        (
            "table",
            [
                "harness",
                "turns",
                "rounds",
                "dropped call",
                "no tool",
                "narrated",
                "silent",
                "exhausted",
                "recovered",
                "abandoned",
            ],
            rows,
            {},
        ),
    ]
    if d["silent_endings"]:
        out.append(("h", 3, "silent", "Plan-as-answer endings, worst first"))
        rows = [
            [
                f"[{_ref(data, r['session_id'])}](#{anchor(r['session_id'])})",
                "silent" if r["outcome"] == "silent_plan_as_answer" else r["outcome"],
                (r["ts"] or "–")[:16].replace("T", " "),
                r["model"] or "–",
                f"{r['round_kind']} / {r['signature']}",
                r["finish_reason"] or "null",
                num(r["stall_index"]),
                num(r["excerpt"])[-140:],
            ]
            for r in d["silent_endings"]
        ]
        out.append(
            (
                "table",
                ["session", "outcome", "time (UTC)", "model", "kind / signature", "finish", "stall", "narration"],
                rows,
                {"wide": True},
            )
        )
    out.append(("h", 3, "rates", "Silent endings per 1,000 turns"))
    rows = [
        [
            dim,
            r["key"],
            num(r["turns"]),
            num(r["silent"]),
            num(r["exhausted"]),
            f"{r['silent_per_1000']:.1f}",
            f"{r['plan_endings_per_1000']:.1f}",
        ]
        for dim in ("harness", "provider", "model")
        for r in d["rates"][dim]
    ]
    out.append(("table", ["by", "key", "turns", "silent", "exhausted", "silent / 1k", "plan / 1k"], rows, {}))
    out.append(("h", 3, "recovery", "Recovery after the k-th nudge"))
    out.append(("chart", "recovery"))
    rows = [
        [h, num(p["nudges"]), num(p["reached"]), num(p["recovered_here"]), pct(p["rate"]), pct(p["cumulative_share"])]
        for h, r in sorted(d["recovery"].items())
        for p in r["curve"]
    ]
    out.append(
        (
            "details",
            "Recovery as a table",
            [("table", ["harness", "k", "reached", "recovered", "rate", "cumulative share"], rows, {})],
        )
    )
    out.append(("h", 3, "bounds", "Other retry bounds: endings that would change"))
    out.append(
        (
            "table",
            ["bound", "re-prompted instead of a plan", "plan instead of a recovery", "plan endings logged"],
            [
                [num(r["bound"]), num(r["would_reprompt"]), num(r["would_deliver"]), num(r["plan_endings"])]
                for r in d["bound_sweep"]
            ],
            {},
        )
    )
    rows = [
        [
            r["id"],
            r["kind"],
            num(r["matched"]),
            num(r["decided"]),
            num(r["vetoed"]),
            num(r["outside_window"]),
            num(r["harness_nudged"]),
        ]
        for r in d["signatures"]
        if r["matched"]
    ]
    if rows:
        out.append(("h", 3, "signatures", "Signature hits"))
        out.append(
            (
                "table",
                ["signature", "kind", "matched", "decided", "vetoed", "outside window", "harness nudged"],
                rows,
                {},
            )
        )
    return out


def _threshold(d: dict[str, Any], data: dict[str, Any]) -> list[tuple[Any, ...]]:
    rows = []
    for r in d["recommendations"]:
        if r["policy"] == "labels":
            continue
        at = r.get("at_2s") or {}
        iv, pl = r.get("interval"), r.get("plateau")
        rows.append(
            [
                r["policy"],
                r["group"],
                num(r["n_events"]),
                num(r["n_gap_decided"]),
                secs(r["threshold"]),
                f"{secs(pl[0])}–{secs(pl[1])}" if pl else "–",
                f"{secs(iv[0])}–{secs(iv[1])}" if iv else "–",
                num(r["cost"]),
                num(r["auto_as_human"]),
                num(r["human_as_auto"]),
                num(at.get("cost")),
            ]
        )
    out: list[tuple[Any, ...]] = [
        (
            "p",
            f"Cost = {num(d['cost_auto_as_human'])} × automatic read as human + {num(d['cost_human_as_auto'])} × "
            f"human read as automatic, over the prompts (user-role records that start a request, tool results "
            f"left out: no threshold changes how the router decides a tool result). Interval: "
            f"{num(d['bootstrap'])} session resamples."
            + (
                " " + note
                if (note := left_out_note(d.get("tool_results_left_out") or [], {r[0] for r in rows}))
                else ""
            ),
        ),
        (
            "table",
            [
                "policy",
                "group",
                "prompts",
                "gap-decided",
                "set s",
                "lowest-cost plateau",
                "95% interval",
                "cost",
                "auto as human",
                "human as auto",
                "cost at 2 s",
            ],
            rows,
            {},
        ),
        ("chart", "cost"),
    ]
    head = ["threshold s"] + [c["policy"] for c in d["curves"] if c["group"] == "all"]
    rows = []
    for t in CURVE_AT:
        row = [secs(t)]
        for c in d["curves"]:
            if c["group"] == "all":
                pt = next((p for p in c["points"] if abs(p["threshold"] - t) < 1e-9), None)
                row.append(num(pt["cost"]) if pt else "–")
        rows.append(row)
    out.append(("details", "Cost at selected thresholds", [("table", head, rows, {})]))
    return out


def _timeline(sid: str, tl: dict[str, Any], data: dict[str, Any]) -> list[tuple[Any, ...]]:
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
                r["origin"] or r["round_kind"] or r["kind"] or "",
                f"{r['decision']} ({r['decided_by']})" if r["decision"] else "",
                "; ".join(flag),
                num(r["excerpt"])[:140],
            ]
        )
    note = f"`stallscan show {_ref(data, sid)}` prints all {num(tl['events'])} events"
    if tl["skipped"]:
        note += f" ({num(tl['skipped'])} not shown here)"
    return [
        ("p", note + "."),
        (
            "table",
            ["line", "time (UTC)", "gap", "role", "origin / round", "decision", "flag", "text"],
            rows,
            {"flag_col": 6, "wide": True},
        ),
    ]


def _generic(v: Any, data: dict[str, Any]) -> list[tuple[Any, ...]]:
    """Any other section's data: scalars in a two-column table, lists of records as tables."""
    if isinstance(v, list) and v and all(isinstance(x, dict) for x in v):
        cols = list(dict.fromkeys(k for r in v for k in r))
        return [("table", cols, [[num(r.get(c)) for c in cols] for r in v], {})]
    if not isinstance(v, dict):
        return [("p", num(v))]
    out: list[tuple[Any, ...]] = []
    scalars = [
        [k, num(x)]
        for k, x in v.items()
        if not isinstance(x, (dict, list)) or (isinstance(x, list) and not any(isinstance(y, (dict, list)) for y in x))
    ]
    if scalars:
        out.append(("table", ["", "value"], scalars, {}))
    for k, x in v.items():
        if isinstance(x, dict) or (isinstance(x, list) and any(isinstance(y, (dict, list)) for y in x)):
            out.append(("h", 3, f"{k}", k.replace("_", " ")))
            if isinstance(x, dict):
                out.append(("table", ["", "value"], [[a, num(b)] for a, b in x.items()], {}))
            else:
                out.extend(_generic(x, data))
    return out
