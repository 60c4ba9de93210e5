"""Report section "Turn boundaries": who wrote each user turn vs what the router's logic decided.

collect() labels the events and replays the decision at the report's threshold (opts.threshold), then
reads everything through `scope_sessions` (the report's shared filters). Data only; render() builds
rich renderables, the CLI prints them.
"""

from __future__ import annotations

from typing import Any

import duckdb
from rich.console import Group, RenderableType
from rich.table import Table

from stallscan.replay.boundaries import replay_boundaries
from stallscan.replay.labels import label_events
from stallscan.report.registry import ReportOptions, Section, register
from stallscan.store import sql

POLICIES = ("router", "gap_only", "header_only")
DECIDERS = ("header", "first", "completion", "gap", "no_time")


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
        truth = "human" if r["is_human_turn"] else r["origin"]
        decision = r["decision"] or "undecided"
        cell = matrix[r["policy"]].setdefault(truth, {"human": 0, "continuation": 0, "undecided": 0})
        cell[decision] += r["n"]
        errors[r["policy"]][r["error"] or "undecided"] += r["n"]
        if r["policy"] == "router":
            deciders[r["decided_by"]]["n"] += r["n"]
            if r["error"] in ("auto_as_human", "human_as_auto"):
                deciders[r["decided_by"]][r["error"]] += r["n"]
    hist: dict[str, Any] = {}
    for r in _rows(sql.query(con, "report/boundaries_gap_histogram")):
        hist.setdefault(r["origin"], []).append({"lo": r["lo"], "hi": r["hi"], "n": r["n"]})
    worst = _rows(sql.query(con, "report/boundaries_errors", {"limit": opts.limit}))
    for w in worst:
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
        "confusion": matrix,
        "errors": errors,
        "decided_by": deciders,
        "no_time": no_time,
        "misclassified": worst,
        "gap_histogram": hist,
    }


def render(data: dict[str, Any]) -> Group:
    parts: list[RenderableType] = []
    t = Table(title=f"Turn boundaries (threshold {data['threshold']:g} s)", title_justify="left")
    for c in ("harness", "origin", "records", "requests", "not requests", "human content"):
        t.add_column(c, justify="left" if c in ("harness", "origin") else "right")
    for r in data["by_harness_origin"]:
        t.add_row(
            r["harness"],
            r["origin"],
            f"{r['records']:,}",
            f"{r['requests']:,}",
            f"{r['not_requests']:,}",
            f"{r['human_content']:,}",
        )
    parts.append(t)
    rec = data["records"]
    parts.append(
        f"{rec['not_requests']:,} of {rec['total']:,} user-role records are not a model request of their own "
        "and are not judged: "
        + ", ".join(f"{r['origin_rule']} {r['n']}" for r in data["not_requests"][:8])
        + (" ..." if len(data["not_requests"]) > 8 else "")
    )
    m = Table(title="Truth x decision (records that start a request)", title_justify="left")
    m.add_column("policy")
    m.add_column("truth")
    for c in ("-> human", "-> continuation", "undecided", "errors"):
        m.add_column(c, justify="right")
    for policy in POLICIES:
        for truth, cell in sorted(data["confusion"][policy].items()):
            wrong = cell["continuation"] if truth == "human" else cell["human"]
            m.add_row(
                policy,
                truth,
                f"{cell['human']:,}",
                f"{cell['continuation']:,}",
                f"{cell['undecided']:,}",
                f"{wrong:,}",
                style="bold" if wrong and policy == "router" else None,
            )
    parts.append(m)
    d = Table(title="Router decisions by rule", title_justify="left")
    for c in ("decided by", "records", "auto as human", "human as auto"):
        d.add_column(c, justify="left" if c == "decided by" else "right")
    for k, v in data["decided_by"].items():
        d.add_row(k, f"{v['n']:,}", f"{v['auto_as_human']:,}", f"{v['human_as_auto']:,}")
    parts.append(d)
    if data["no_time"]:
        parts.append(
            "no trustworthy gap: "
            + ", ".join(
                f"{r['reason']} {r['n']}" + ("" if r["starts_request"] else " (not requests)") for r in data["no_time"]
            )
        )
    if data["misclassified"]:
        w = Table(title="Misclassified turns, worst first", title_justify="left")
        for c in ("session", "time (UTC)", "gap s", "prev reply", "decided by", "truth rule", "error", "excerpt"):
            w.add_column(c, no_wrap=c != "excerpt", overflow="ellipsis", max_width=40 if c == "excerpt" else 24)
        for r in data["misclassified"]:
            w.add_row(
                r["session_id"][:8],
                (r["ts"] or "-")[:19].replace("T", " "),
                "-" if r["gap_s"] is None else f"{r['gap_s']:.2f}",
                r["prev_reply_status"] or "-",
                r["decided_by"],
                r["origin_rule"],
                r["error"].replace("_as_", " as "),
                r["excerpt"][:80],
            )
        parts.append(w)
    if data["gap_histogram"]:
        h = Table(title="Gap after a final reply (records that start a request)", title_justify="left")
        h.add_column("gap s")
        origins = sorted(data["gap_histogram"])
        for o in origins:
            h.add_column(o, justify="right")
        bins = data["gap_histogram"][origins[0]]
        for i, b in enumerate(bins):
            label = f"{b['lo']:g}-{b['hi']:g}" if b["hi"] is not None else f">= {b['lo']:g}"
            h.add_row(label, *[str(data["gap_histogram"][o][i]["n"]) for o in origins])
        parts.append(h)
    return Group(*parts)


register(Section("boundaries", "Turn boundaries", collect, render))
