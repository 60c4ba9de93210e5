"""Report section "Stalls": counts by kind and outcome, silent endings worst first, rates, recovery
curves, the retry-bound sweep and per-signature hits. collect() returns JSON-ready dicts (stable keys);
blocks() lays them out; nothing here prints."""

from __future__ import annotations

from typing import Any

import duckdb

from stallscan.replay.stall_data import measured_precision, precision_line
from stallscan.replay.stalls import (
    ReplayInfo,
    bound_sweep,
    list_stalls,
    recovery,
    replay_stalls,
)
from stallscan.report.blocks import Block, Column, Details, Heading, LineChart, Paragraph, Table
from stallscan.report.cells import num, pct, session_link
from stallscan.report.section import Parts, ReportOptions, Section
from stallscan.report.summary_cells import refresh_stalls, signature_hits, stall_counts, stall_rates
from stallscan.report.timeline import session_refs

SWEEP_BOUNDS = [0, 1, 2, 3, 4, 5]
PLAN_ENDINGS = ("silent_plan_as_answer", "exhausted")  # the outcomes of the listed endings (worst first)


def no_bound_sweep(bounds: list[int]) -> list[dict[str, Any]]:
    """What stallscan.replay.stalls.bound_sweep answers over no stall row (queries/replay/stall_bounds.sql: a row per
    bound, in order, every count 0)."""
    return [{"bound": b, "would_reprompt": 0, "would_deliver": 0, "plan_endings": 0} for b in sorted(bounds)]


def _iso(v: Any) -> Any:
    return v.isoformat() if hasattr(v, "isoformat") else v


def collect(con: duckdb.DuckDBPyConnection, opts: ReportOptions) -> dict[str, Any]:
    head = first(con, opts)
    return joined(head, rest(con, opts, head))


def first(con: duckdb.DuckDBPyConnection, opts: ReportOptions) -> dict[str, Any]:
    """The replay, its per-session cells brought up to date and the silent endings (the sessions the report's
    timelines list): what `rest` reads, and the report's lanes wait for (stallscan.report.lanes)."""
    if opts._replayed:  # given tables (report --from-parquet): the replay's own settings, from stall_replay_info
        row = con.execute(
            "SELECT retry_bound, narrated_bound, segmentation, data_version FROM stall_replay_info"
        ).fetchall()[0]
        info = ReplayInfo(row[0], row[1], row[2], row[3], 0, 0, 0)
    else:
        info = replay_stalls(con, retry_bound=opts.retry_bound, config=opts._config)
    refresh_stalls(con)  # the per-session counts of rounds, turns and signature hits read below
    counts = stall_counts(con)
    # the stall rows in scope by outcome, from the counts just read: the queries below read only stall rows in scope
    # (the plan endings, every episode), so with none of their rows they are not run (their planning is their cost:
    # 5-12 CPU ms each) and their answer for no rows is given as they give it
    outcomes = [(key, n) for c in counts.values() for key, n in c.get("stall_outcome", {}).items()]
    plan_endings = sum(n for key, n in outcomes if key in PLAN_ENDINGS)
    worst = list_stalls(con, outcome=list(PLAN_ENDINGS), scoped=True, limit=opts.limit) if plan_endings else []
    worst = [{**{k: _iso(v) for k, v in r.items()}} for r in worst if r["delivered"]]
    refs = session_refs(con, [r["session_id"] for r in worst])
    for r in worst:
        r["ref"] = refs[r["session_id"]]
    return {
        "retry_bound": info.retry_bound,
        "narrated_bound": info.narrated_bound,
        "segmentation": info.segmentation,
        "data_version": info.data_version,
        "counts": counts,
        "silent_endings": worst,
    }


def rest(con: duckdb.DuckDBPyConnection, opts: ReportOptions, head: dict[str, Any]) -> dict[str, Any]:
    """The rates, curves and hits, read from what `first` wrote (on any connection of the database). head: first's
    data; its counts say whether the scope holds a stall row (with none, the recovery and the bound sweep are
    not run: their answer for no rows is given as they give it)."""
    bounds = sorted(set(SWEEP_BOUNDS + [opts.retry_bound]))
    any_stall = any(n for c in head["counts"].values() for n in c.get("stall_outcome", {}).values())
    return {
        "rates": stall_rates(con),
        "recovery": recovery(con, scoped=True) if any_stall else {},
        "bound_sweep": bound_sweep(con, bounds, scoped=True) if any_stall else no_bound_sweep(bounds),
        "signatures": signature_hits(con),
        "precision": measured_precision(),
    }


KEYS = "retry_bound narrated_bound segmentation data_version counts silent_endings rates recovery bound_sweep"
KEYS += " signatures precision"  # (the data's keys in order)


def joined(head: dict[str, Any], tail: dict[str, Any]) -> dict[str, Any]:
    """The section's data from its two parts, its keys in the order the report prints them."""
    both = {**head, **tail}
    return {k: both[k] for k in KEYS.split()}


COUNT_COLS = [
    Column("harness", "id", 99),
    Column("turns", keep=90),
    Column("rounds", keep=60),
    Column("dropped call", keep=55),
    Column("no tool", keep=55),
    Column("narrated", keep=55),
    Column("silent", keep=95),
    Column("exhausted rounds", keep=92),
    Column("recovered", keep=80),
    Column("abandoned", keep=45),
]


def _counts_rows(data: dict[str, Any]) -> list[list[str]]:
    turns = {r["key"]: r["turns"] for r in data["rates"]["harness"]}
    rows = []
    for h, c in sorted(data["counts"].items()):
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
    return rows


def _one_line(data: dict[str, Any]) -> str:
    """The default report's line: stalled rounds, where, and how many ended silent or past the bound."""
    rows = _counts_rows(data)

    def total(i: int) -> int:
        return sum(int(r[i].replace(",", "")) for r in rows)

    stalled = total(3) + total(4) + total(5)  # dropped call, no tool, narrated
    hit = sum(1 for r in rows if any(r[i] != "0" for i in (3, 4, 5)))
    return (
        f"{stalled:,} stalled rounds in {hit} of {len(rows)} harnesses; {total(6):,} silent, "
        f"{total(7):,} exhausted rounds"
    )


def blocks(d: dict[str, Any], report: dict[str, Any], full: bool) -> list[Block]:
    if not full:
        return [Paragraph(_one_line(d))]
    out: list[Block] = [
        Paragraph(
            f"Retry bound {d['retry_bound']}, narrated bound {d['narrated_bound']}, turns from {d['segmentation']}."
        ),
        Table(COUNT_COLS, _counts_rows(d)),
        Paragraph(precision_line(d.get("precision"))),
    ]
    if d["silent_endings"]:
        out += [Heading("Plan-as-answer endings, worst first", 3, "silent"), _endings(d, report)]
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
    cols = [Column("by", "id", 90), Column("key", "text", 95, min=12, max=34), Column("turns", keep=90)]
    cols += [Column("silent", keep=90), Column("exhausted endings", keep=80), Column("silent / 1k", keep=85)]
    cols += [Column("plan / 1k", keep=60)]
    out += [Heading("Silent endings per 1,000 turns", 3, "rates"), Table(cols, rows)]
    out += [Heading("Recovery after the k-th nudge", 3, "recovery"), *_recovery(d)]
    out += [Heading("Other retry bounds: endings that would change", 3, "bounds")]
    cols = [Column("bound", keep=99), Column("re-prompted instead of a plan"), Column("plan instead of a recovery")]
    cols += [Column("plan endings logged")]
    rows = [
        [num(r["bound"]), num(r["would_reprompt"]), num(r["would_deliver"]), num(r["plan_endings"])]
        for r in d["bound_sweep"]
    ]
    out.append(Table(cols, rows))
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
        cols = [Column("signature", "text", 99, min=14, max=36), Column("kind", "id", 60), Column("matched", keep=90)]
        cols += [Column("decided", keep=85), Column("vetoed", keep=70), Column("outside window", keep=40)]
        cols += [Column("harness nudged", keep=45)]
        out += [Heading("Signature hits", 3, "signatures"), Table(cols, rows)]
    return out


def _endings(d: dict[str, Any], report: dict[str, Any]) -> Table:
    rows = [
        [
            session_link(report, r["session_id"]),
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
    cols = [
        Column("session", "id", 96),
        Column("outcome", "id", 95),
        Column("time (UTC)", "id", 30),
        Column("model", "text", 40, min=8, max=24),
        Column("kind / signature", "text", 50, min=10, max=36),
        Column("finish", "id", 35),
        Column("stall", keep=60),
        Column("narration", "text", 70, min=16, max=60),
    ]
    return Table(cols, rows, wide=True)


def _recovery(d: dict[str, Any]) -> list[Block]:
    series = {}
    for h, rec in sorted(d["recovery"].items()):
        pts = [
            (float(p["nudges"]), float(p["cumulative_share"]))
            for p in rec["curve"]
            if p["cumulative_share"] is not None
        ]
        if pts:
            series[h] = pts
    chart = LineChart(
        "nudges sent (k)",
        "share of recovered episodes",
        series,
        "Share of the stall episodes that recovered "
        "by the k-th nudge, per harness (episodes that never recovered are not in the share).",
        ymax=1.0,
    )
    rows = [
        [h, num(p["nudges"]), num(p["reached"]), num(p["recovered_here"]), pct(p["rate"]), pct(p["cumulative_share"])]
        for h, r in sorted(d["recovery"].items())
        for p in r["curve"]
    ]
    cols = [Column("harness", "id", 99), Column("k", keep=95), Column("reached", keep=80)]
    cols += [Column("recovered", keep=80), Column("rate", keep=70), Column("cumulative share", keep=75)]
    return [chart, Details("Recovery as a table", [Table(cols, rows)])]


SECTION = Section("stalls", "Stalls", collect, blocks, Parts(first, rest, joined))
