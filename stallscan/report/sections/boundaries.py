"""Report section "Turn boundaries": who wrote each user turn vs what the router's logic decided.

collect() labels the events and replays the decision at the report's threshold (opts.threshold), then
reads everything through `scope_sessions` (the report's shared filters); blocks() lays the data out.
"""

from __future__ import annotations

from typing import Any

import duckdb

from stallscan.replay.boundaries import replay_boundaries
from stallscan.replay.labels import label_events
from stallscan.report.blocks import BarChart, Block, Column, Details, Heading, Paragraph, Table
from stallscan.report.cells import num, session_link
from stallscan.report.headline import duration
from stallscan.report.section import ReportOptions, Section
from stallscan.report.summary_cells import refresh_boundaries
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
        label_events(con, opts._config)
        replay_boundaries(con, opts.threshold, summary=False)  # (the section counts from its cells)
    refresh_boundaries(con, scoped=True)  # the per-session counts (and their sums) the queries below read
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


RULE_COLS = [Column("decided by", "id", 90), Column("records"), Column("auto as human"), Column("human as auto")]


def _rules(data: dict[str, Any], title: str = "") -> Table:
    rows = [[k, num(v["n"]), num(v["auto_as_human"]), num(v["human_as_auto"])] for k, v in data["decided_by"].items()]
    return Table(RULE_COLS, rows, title)


def blocks(d: dict[str, Any], report: dict[str, Any], full: bool) -> list[Block]:
    if not full:
        m = d["misread"]
        return [
            Paragraph(
                f"{num(m['turns']['misread'])} misread of {num(m['turns']['records'])} at {num(d['threshold'])} s: "
                f"{num(m['prompts']['misread'])} prompt(s), {num(m['tool_results']['misread'])} tool result(s)"
            )
        ]
    m = d["misread"]
    t, p, tr = m["turns"], m["prompts"], m["tool_results"]
    out: list[Block] = [
        Paragraph(
            f"At {num(d['threshold'])} s the router misreads {num(t['misread'])} of the {num(t['records'])} "
            f"user-role records that start a request (tool results included): {num(t['auto_as_human'])} automatic "
            f"read as human, {num(t['human_as_auto'])} human read as automatic. {num(p['misread'])} of them are "
            f"among the {num(p['records'])} prompts (the population the threshold sweep scores), "
            f"{num(tr['misread'])} among the {num(tr['records'])} tool results."
        ),
        Heading("Router decisions by rule", 3, "rules"),
        _rules(d),
        Heading("Truth x decision (records that start a request)", 3, "confusion"),
    ]
    rows = []
    for policy, cells in d["confusion"].items():
        for truth, c in sorted(cells.items()):
            wrong = c["continuation"] if truth == "human" else c["human"]
            rows.append([policy, truth, num(c["human"]), num(c["continuation"]), num(c["undecided"]), num(wrong)])
    cols = [Column("policy", "id", 90), Column("truth", "id", 90), Column("→ human", keep=80)]
    cols += [Column("→ continuation", keep=80), Column("undecided", keep=40), Column("errors", keep=85)]
    out.append(Table(cols, rows))
    if d["misclassified"]:
        out += [Heading("Misread turns, worst first", 3, "misread"), _misread(d, report)]
    out += [Heading("Gap after a final reply", 3, "gaps"), *_gaps(d)]
    out += _not_judged(d)
    return out


def _misread(d: dict[str, Any], report: dict[str, Any]) -> Table:
    rows = [
        [
            session_link(report, r["session_id"]),
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
    cols = [
        Column("session", "id", 95),
        Column("line", keep=60),
        Column("time (UTC)", "id", 20),
        Column("gap", keep=85),
        Column("prev reply", "id", 45),
        Column("decided by", "id", 70),
        Column("truth rule", "text", 50, min=12, max=28),
        Column("error", "id", 90),
        Column("excerpt", "text", 55, min=12, max=60),
    ]
    return Table(cols, rows, wide=True)


def _gaps(d: dict[str, Any]) -> list[Block]:
    hist = d["gap_histogram"]
    if not hist:
        return []
    origins = sorted(hist)
    bins = hist[origins[0]]
    chart = BarChart(
        "gap histogram",
        "gap after the previous final reply (histogram bins, seconds)",
        "user-role records",
        [(b["lo"], b["hi"]) for b in bins],
        {o: [x["n"] for x in hist[o]] for o in origins},
        d["threshold"],
        "Records that start a request, after a final reply with a trustworthy gap. Automatic "
        "prompts left of the threshold and human turns right of it are read correctly by the gap rule.",
    )
    rows = [
        [f"{num(b['lo'])}–{num(b['hi'])} s" if b["hi"] is not None else f"≥ {num(b['lo'])} s"]
        + [num(hist[o][i]["n"]) for o in origins]
        for i, b in enumerate(bins)
    ]
    table = Table([Column("gap", "id", 99)] + [Column(o) for o in origins], rows)
    return [chart, Details("Gap histogram as a table", [table])]


def _not_judged(d: dict[str, Any]) -> list[Block]:
    out: list[Block] = []
    nr = d.get("not_requests") or []
    if nr:
        out.append(
            Paragraph(
                f"Not judged: {num(d['records']['not_requests'])} user-role records that are not a model "
                "request of their own ("
                + ", ".join(f"{r['origin_rule']} {num(r['n'])}" for r in nr[:8])
                + (", …" if len(nr) > 8 else "")
                + ")."
            )
        )
    if d["no_time"]:
        out.append(
            Paragraph(
                "No trustworthy gap: "
                + ", ".join(
                    f"{r['reason']} {num(r['n'])}" + ("" if r["starts_request"] else " (not requests)")
                    for r in d["no_time"]
                )
                + "."
            )
        )
    rows = [
        [
            r["harness"],
            r["origin"],
            num(r["records"]),
            num(r["requests"]),
            num(r["not_requests"]),
            num(r["human_content"]),
        ]
        for r in d["by_harness_origin"]
    ]
    cols = [Column("harness", "id", 90), Column("origin", "id", 90), Column("records", keep=80)]
    cols += [Column("requests", keep=70), Column("not requests", keep=40), Column("human text", keep=30)]
    out.append(Details("User-role records by harness and truth", [Table(cols, rows)]))
    return out


SECTION = Section("boundaries", "Turn boundaries", collect, blocks)
