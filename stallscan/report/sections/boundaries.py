"""Report section "Turn boundaries": who wrote each user turn vs what the router's logic decided.

collect() labels the events and replays the decision at the report's threshold (opts.threshold), then
reads everything through `scope_sessions` (the report's shared filters). Data only; render() builds
rich renderables, the CLI prints them.
"""

from __future__ import annotations

from typing import Any

import duckdb
from rich.console import Group, RenderableType
from rich.text import Text

from stallscan.replay.boundaries import replay_boundaries
from stallscan.replay.labels import label_events
from stallscan.report.fit import Col, fit_table
from stallscan.report.section import ReportOptions, Section
from stallscan.report.timeline import session_refs
from stallscan.store import sql

POLICIES = ("router", "gap_only", "header_only")
DECIDERS = ("header", "first", "completion", "gap", "no_time")
EXAMPLES = 3  # misread turns offered to the headline's examples, one per session, spread over harnesses


def _rows(cur: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    cols = [d[0] for d in cur.description]
    return [dict(zip(cols, r)) for r in cur.fetchall()]


def collect(con: duckdb.DuckDBPyConnection, opts: ReportOptions) -> dict[str, Any]:
    if not opts._replayed:  # given tables (report --from-parquet) are read as they are
        label_events(con)
        replay_boundaries(con, opts.threshold)
    by_origin = _rows(sql.query(con, "report/boundaries_by_origin"))
    conf = _rows(sql.query(con, "report/boundaries_confusion"))
    matrix: dict[str, Any] = {p: {} for p in POLICIES}
    errors: dict[str, Any] = {p: {"none": 0, "auto_as_human": 0, "human_as_auto": 0, "undecided": 0} for p in POLICIES}
    deciders = {d: {"n": 0, "auto_as_human": 0, "human_as_auto": 0} for d in DECIDERS}
    for r in conf:
        truth = r["truth"]
        decision = r["decision"] or "undecided"
        cell = matrix[r["policy"]].setdefault(truth, {"human": 0, "continuation": 0, "undecided": 0})
        cell[decision] += r["n"]
        errors[r["policy"]][r["error"] or "undecided"] += r["n"]
        if r["policy"] == "router":
            deciders[r["decided_by"]]["n"] += r["n"]
            if r["error"] in ("auto_as_human", "human_as_auto"):
                deciders[r["decided_by"]][r["error"]] += r["n"]
    misread = _populations(conf)
    hist: dict[str, Any] = {}
    for r in _rows(sql.query(con, "report/boundaries_gap_histogram")):
        hist.setdefault(r["truth"], []).append({"lo": r["lo"], "hi": r["hi"], "n": r["n"]})
    worst = _rows(sql.query(con, "report/boundaries_errors", {"limit": opts.limit}))
    refs = session_refs(con, [w["session_id"] for w in worst])
    for w in worst:
        w["ref"] = refs[w["session_id"]]
        w["ts"] = w["ts"].isoformat() if w["ts"] is not None else None
        w["gap_s"] = round(w["gap_s"], 3) if w["gap_s"] is not None else None
    examples = _rows(sql.query(con, "report/boundaries_examples", {"k": EXAMPLES}))
    for w in examples:
        w["ts"] = w["ts"].isoformat() if w["ts"] is not None else None
        w["gap_s"] = round(w["gap_s"], 3) if w["gap_s"] is not None else None
    no_time = _rows(sql.query(con, "report/boundaries_no_time"))
    not_requests = _rows(sql.query(con, "report/boundaries_not_requests"))
    records = sum(r["records"] for r in by_origin)
    requests = sum(r["requests"] for r in by_origin)
    return {
        "threshold": opts.threshold,
        "records": {"total": records, "requests": requests, "not_requests": records - requests},
        "by_harness_origin": by_origin,
        "not_requests": not_requests,
        "misread": misread,
        "confusion": matrix,
        "errors": errors,
        "decided_by": deciders,
        "no_time": no_time,
        "misclassified": worst,
        "examples": examples,
        "gap_histogram": hist,
    }


def _populations(conf: list[dict[str, Any]]) -> dict[str, Any]:
    """The router's errors over the two populations the tool reports, with one definition each.

    turns:   every user-role record that starts a model request, tool results included (a Cline tool
             result can carry a person's feedback; a tool result can be taken for a new turn). This is
             what `boundaries` lists and what "misread turns" means everywhere.
    prompts: the same without tool results: the population the threshold sweep scores (a tool result
             follows a tool-call reply, so no threshold changes how the router decides it)."""
    out = {
        k: {"records": 0, "auto_as_human": 0, "human_as_auto": 0, "misread": 0}
        for k in ("turns", "prompts", "tool_results")
    }
    for r in conf:
        if r["policy"] != "router":
            continue
        keys = ("turns", "tool_results") if r["origin"] == "tool_result" else ("turns", "prompts")
        for k in keys:
            out[k]["records"] += r["n"]
            if r["error"] in ("auto_as_human", "human_as_auto"):
                out[k][r["error"]] += r["n"]
                out[k]["misread"] += r["n"]
    return out


def _c(n: int) -> str:
    return f"{n:,}"


def populations_note(data: dict[str, Any]) -> str:
    m = data["misread"]
    t, p, tr = m["turns"], m["prompts"], m["tool_results"]
    return (
        f"Misread turns at {data['threshold']:g} s: {_c(t['misread'])} of {_c(t['records'])} records that start a "
        f"request (tool results included); {_c(p['misread'])} of them among the {_c(p['records'])} prompts the "
        f"threshold sweep scores, {_c(tr['misread'])} among the {_c(tr['records'])} tool results."
    )


def _rules_table(data: dict[str, Any]) -> RenderableType:
    rows = [[k, _c(v["n"]), _c(v["auto_as_human"]), _c(v["human_as_auto"])] for k, v in data["decided_by"].items()]
    return fit_table(
        [Col("decided by", "id", 90), Col("records"), Col("auto as human"), Col("human as auto")],
        rows,
        title="Router decisions by rule (records that start a request)",
    )


def summary(data: dict[str, Any]) -> Group:
    return Group(Text("Turn boundaries", style="bold"), populations_note(data), _rules_table(data))


def render(data: dict[str, Any]) -> Group:
    parts: list[Any] = [
        Text(f"Turn boundaries (threshold {data['threshold']:g} s)", style="bold"),
        populations_note(data),
    ]
    rows = [
        [r["harness"], r["origin"], _c(r["records"]), _c(r["requests"]), _c(r["not_requests"]), _c(r["human_content"])]
        for r in data["by_harness_origin"]
    ]
    parts.append(
        fit_table(
            [
                Col("harness", "id", 90),
                Col("origin", "id", 90),
                Col("records", keep=80),
                Col("requests", keep=70),
                Col("not req", keep=40),
                Col("human text", keep=30),
            ],
            rows,
            title="User-role records by harness and truth",
        )
    )
    rec = data["records"]
    parts.append(
        f"{rec['not_requests']:,} of {rec['total']:,} user-role records are not a model request of their own "
        "and are not judged: "
        + ", ".join(f"{r['origin_rule']} {r['n']}" for r in data["not_requests"][:8])
        + (" ..." if len(data["not_requests"]) > 8 else "")
    )
    rows, styles = [], []
    for policy in POLICIES:
        for truth, cell in sorted(data["confusion"][policy].items()):
            wrong = cell["continuation"] if truth == "human" else cell["human"]
            rows.append([policy, truth, _c(cell["human"]), _c(cell["continuation"]), _c(cell["undecided"]), _c(wrong)])
            styles.append("bold" if wrong and policy == "router" else None)
    parts.append(
        fit_table(
            [
                Col("policy", "id", 90),
                Col("truth", "id", 90),
                Col("-> human", keep=80),
                Col("-> cont.", keep=80),
                Col("undecided", keep=40),
                Col("errors", keep=85),
            ],
            rows,
            title="Truth x decision (records that start a request)",
            styles=styles,
        )
    )
    parts.append(_rules_table(data))
    if data["no_time"]:
        parts.append(
            "no trustworthy gap: "
            + ", ".join(
                f"{r['reason']} {r['n']}" + ("" if r["starts_request"] else " (not requests)") for r in data["no_time"]
            )
        )
    if data["misclassified"]:
        rows = [
            [
                r.get("ref") or r["session_id"],
                str(r["line"]),
                (r["ts"] or "-")[:16].replace("T", " "),
                "-" if r["gap_s"] is None else f"{r['gap_s']:.2f}",
                r["prev_reply_status"] or "-",
                r["decided_by"],
                r["origin_rule"],
                r["error"].replace("_as_", " as "),
                r["excerpt"],
            ]
            for r in data["misclassified"]
        ]
        parts.append(
            fit_table(
                [
                    Col("session", "id", 95),
                    Col("line", keep=60),
                    Col("time (UTC)", "id", 20),
                    Col("gap s", keep=85),
                    Col("prev reply", "id", 45),
                    Col("decided by", "id", 70),
                    Col("truth rule", "text", 50, min=12, max=28),
                    Col("error", "id", 90),
                    Col("excerpt", "text", 55, min=12, max=60),
                ],
                rows,
                title="Misread turns, worst first (open one: stallscan show SESSION)",
            )
        )
    if data["gap_histogram"]:
        origins = sorted(data["gap_histogram"])
        bins = data["gap_histogram"][origins[0]]
        rows = [
            [f"{b['lo']:g}-{b['hi']:g}" if b["hi"] is not None else f">= {b['lo']:g}"]
            + [_c(data["gap_histogram"][o][i]["n"]) for o in origins]
            for i, b in enumerate(bins)
        ]
        parts.append(
            fit_table(
                [Col("gap s", "id", 99)] + [Col(o) for o in origins],
                rows,
                title="Gap after a final reply (records that start a request)",
            )
        )
    return Group(*parts)


SECTION = Section("boundaries", "Turn boundaries", collect, render, summary)
