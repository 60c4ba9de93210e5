"""Replay the stall logic (dropped tool calls, narrated intent, bounded re-prompts) over `events`.

Core API (no CLI here):
  replay_stalls(con, retry_bound=3, narrated_bound=2) -> ReplayInfo
      (re)creates the tables `rounds_core` with its sparse columns apart (`rounds_hits`, `rounds_nudges`,
      `rounds_evidence`; read through the views `rounds_narrow` and `rounds`), `stalls`, `turns` from `events`
      (idempotent);
  list_stalls(con, ...) / silent_rates(con) / recovery(con) / bound_sweep(con, bounds) -> plain rows.

The production replay is SQL (queries/replay/stall_*.sql); stallscan/replay/stalls_ref.py walks one session in
plain Python with the same rules, and the tests hold the two to agreement.
Turn segmentation uses the turn-boundary truth (stallscan.replay.labels.label_events -> user_labels); with
segmentation="fallback", human-looking user messages (queries/replay/stall_turn_starts.sql).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

import duckdb

from stallscan.replay import stall_data
from stallscan.replay.stall_rules import NARRATED_BOUND, RETRY_BOUND
from stallscan.store import sql

STALL_KINDS = ("dropped_tool_call", "no_tool", "narrated_intent")
# what a stall episode ended as (stalls.outcome), and the short names `stallscan stalls --outcome` accepts
OUTCOMES = ("silent_plan_as_answer", "exhausted", "abandoned", "recovered", "answered")
OUTCOME_ALIASES = {"silent": "silent_plan_as_answer", "plan": "silent_plan_as_answer"}
# the stored tables of the rounds: every reply's row (rounds_core) and its columns that are empty on most replies,
# stored only where set (queries/replay/stall_rounds.sql, stall_rounds_side.sql); the view rounds_narrow joins them
ROUND_TABLES = ("rounds_core", "rounds_hits", "rounds_nudges", "rounds_evidence")


@dataclass
class ReplayInfo:
    retry_bound: int
    narrated_bound: int
    segmentation: str  # "labels" (user_labels origin = human) or "fallback" (stall_turn_starts.sql)
    data_version: str
    rounds: int
    stalls: int
    turns: int


def replay_stalls(
    con: duckdb.DuckDBPyConnection,
    retry_bound: int = RETRY_BOUND,
    narrated_bound: int = NARRATED_BOUND,
    segmentation: str = "auto",
    config: Any = None,
) -> ReplayInfo:
    """(Re)create `rounds`, `stalls` and `turns` from `events`. segmentation: auto | labels | fallback.

    config: passed to label_events (a dict, a stallscan.toml path, or None for $STALLSCAN_CONFIG /
    ./stallscan.toml); stallscan.spark passes the driver's config so executors never look for a file."""
    if retry_bound < 0 or narrated_bound < 0:
        raise ValueError("bounds must be >= 0")
    from stallscan.replay import derive
    from stallscan.store import stamps

    if not sql.has_table(con, "stall_signatures", schema=None, temporary=None):
        stall_data.install(con)  # the rule tables the stall queries read (a full replay installs them anew)
    if segmentation in ("auto", "labels"):
        from stallscan.replay.labels import label_events

        label_events(con, config)
        used = "labels"
        st = stamps.get(con, "user_labels")
        upstream: tuple[str, ...] = ("user_labels",)
    else:
        used, st, upstream = "fallback", None, ()
    inputs = {
        "retry_bound": int(retry_bound),
        "narrated_bound": int(narrated_bound),
        "segmentation": used,
        "labels": st["key"] if st else None,
    }
    mode = derive.run(
        con,
        "stalls",
        inputs,
        lambda c: _compute(c, retry_bound, narrated_bound, used),
        ROUND_TABLES + ("stalls", "turns"),  # (rounds_narrow, rounds: views over them and events)
        upstream=upstream,
    )
    _rounds_views(con, mode != "reused")
    counts = cast(
        "tuple[int, int, int, str | None]",
        con.execute(
            "SELECT (SELECT count(*) FROM rounds_core), (SELECT count(*) FROM stalls), (SELECT count(*) FROM turns), "
            "(SELECT any_value(data_version) FROM stall_replay_info)"
        ).fetchone(),
    )
    version = counts[3] or stall_data.load().version  # (reused tables: no need to parse the rule files)
    return ReplayInfo(retry_bound, narrated_bound, used, version, counts[0], counts[1], counts[2])


def _rounds_views(con: duckdb.DuckDBPyConnection, replayed: bool) -> None:
    """The views `rounds_narrow` (queries/replay/stall_rounds_narrow_view.sql) and `rounds`
    (queries/replay/stall_rounds_view.sql) in the current schema, made anew after a replay wrote the tables and
    else only when missing: a database written before a view holds a table of its name (rounds, rounds_narrow),
    dropped first. Nothing written when a reused replay finds both views (it leaves the database as it was)."""
    for name, query in (("rounds_narrow", "replay/stall_rounds_narrow_view"), ("rounds", "replay/stall_rounds_view")):
        kinds = {
            r[0]
            for r in con.execute(
                "SELECT 'table' FROM duckdb_tables() WHERE database_name = current_database() "
                "AND schema_name = current_schema() AND table_name = $n UNION ALL "
                "SELECT 'view' FROM duckdb_views() WHERE database_name = current_database() "
                "AND schema_name = current_schema() AND view_name = $n",
                {"n": name},
            ).fetchall()
        }
        if "view" in kinds and not replayed:
            continue
        if "table" in kinds:
            sql.drop_stored_table(con, name)
        sql.run(con, query)


def _compute(con: duckdb.DuckDBPyConnection, retry_bound: int, narrated_bound: int, used: str) -> None:
    """(Re)create the ROUND_TABLES, `stalls`, `turns` (in the schema the search path names) from `events`."""
    data = stall_data.install(con)
    if used == "labels":
        sql.run(con, "replay/stall_turn_starts_labels")
    else:
        sql.run(con, "replay/stall_turn_starts")
    _turn_numbers(con)
    tools = "|".join(f"(?:{bg.tool})" for bg in data.background) or None  # (any entry's tool: stall_calls)
    sql.run(con, "replay/stall_rounds_prep", {"bg_tools": tools})
    for i, bg in enumerate(data.background):  # one statement per entry: its regexes are compiled once
        sql.run(
            con,
            "replay/stall_background_match",
            {"ord": i, "id": bg.id, "tool": bg.tool, "arguments": bg.arguments},
        )
    sql.run(con, "replay/stall_turn_evidence")
    for i, sig in enumerate(data.signatures):
        sql.run(
            con,
            "replay/stall_sig_match",
            {"ord": i, "id": sig.id, "kind": sig.kind, "regex": sig.regex, "max_chars": sig.max_chars},
        )
    failed = True
    try:
        sql.run(con, "replay/stall_rounds")
        failed = False
    finally:  # the file turns an optimizer rule off around its rounds statement: back on when that one fails
        sql.after_failure(con, "RESET disabled_optimizers", failed)  # (in a transaction: sql.rollback resets it)
    sql.run(con, "replay/stall_rounds_side")
    con.execute("DROP TABLE stall_scan")  # (freed before the walk)
    _walk(con)
    sql.run(con, "replay/stall_replay", {"retry_bound": retry_bound, "narrated_bound": narrated_bound})
    con.execute("DROP TABLE stall_walk_scan")
    sql.run(con, "replay/stall_turns")
    con.execute(
        "CREATE OR REPLACE TABLE stall_replay_info AS SELECT $r::INTEGER AS retry_bound, "
        "$n::INTEGER AS narrated_bound, $s AS segmentation, $v AS data_version, now() AS replayed_at",
        {"r": retry_bound, "n": narrated_bound, "s": used, "v": data.version},
    )
    for t in (
        "stall_nudges",
        "stall_prompt_hits",
        "stall_turn_span",
        "stall_turn_evidence",
        "stall_sentinels",
        "stall_tail_caps",
        "stall_tails",
        "stall_tail_matches",
        "stall_sig_hits",
        "stall_model_provider",
        "stall_walk",
        "stall_turn_starts",
        "stall_calls",
        "stall_bg_hits",
    ):
        con.execute(f"DROP TABLE IF EXISTS {t}")
    for v in ("stall_tail_chars", "stall_cap"):  # (stall_rounds_prep.sql's limits: nothing left on the connection)
        con.execute(f"RESET VARIABLE {v}")


def _turn_numbers(con: duckdb.DuckDBPyConnection) -> None:
    """The temp table `stall_scan`: every event's turn number (human turn starts so far in its session) and,
    counted inside the turn, a reply's place in it (round_in_turn), whether a tool round came before it in the
    turn (after_tool_round), the rowid of the turn's last reply at or before each event (round_rid, -1: none;
    the round a nudge after it reacts to) and whether a reply is its turn's last (last_in_turn): segmented running
    sums (stallscan/replay/scan.py) over batches of whole sessions (scan.scan_into), one row per event in storage
    order. And the temp table `stall_turn_span`, one row per turn (a session's rows from a turn start, or from its
    first row, to the next turn start): the rowid of its start (first_rid; turn 0, before the session's first turn
    start, has none: its first row in storage order), whether it has one (started), the rowids of its last reply,
    of its last reply that names a model and of its last that names a finish reason (last_rid, model_rid,
    finish_rid; -1: none), its replies and their tool calls (n_rounds, n_tool_calls), its first and last seq and
    its first and last time (the rows' least ts and greatest ts_end else ts; NULL when no row has one)."""
    import numpy as np
    import pyarrow as pa

    from stallscan.replay import scan
    from stallscan.store import arrow

    with sql.timed("scan mark scan_stall_starts"):
        turn_starts = np.sort(scan.fetch_rids(con, "scan_stall_starts"))  # (sorted: each batch marks its slice)
    micros = pa.timestamp("us", tz="UTC")

    def step(w: scan.Walk) -> dict[str, Any]:
        rids = w.cols["rid_storage"]  # (ascending: storage order)
        lo = np.searchsorted(turn_starts, rids[0], side="left") if w.n else 0
        hi = np.searchsorted(turn_starts, rids[-1], side="right") if w.n else 0
        starts = w.mark_rids(turn_starts[lo:hi])  # only the turn starts inside this batch's rowids
        reply, calls = w.cols["reply"], w.cols["reply_calls"]
        tool = calls > 0
        tseg = w.starts | starts  # a turn's rows: from its start (or the session's first row) to the next
        idx = np.arange(w.n, dtype=np.int64)
        first = np.maximum.accumulate(np.where(tseg, idx, 0)) if w.n else idx  # (scan.seg_start, found once)
        in_turn = _cumsum_from(reply, first)
        tools_before = _cumsum_from(tool, first) - tool
        last = np.maximum.accumulate(np.where(reply, idx, -1)) if w.n else idx
        last[last < first] = -1
        pos = idx if w.perm is None else w.perm  # walk position -> storage position
        round_rid = np.where(last >= 0, rids[pos[np.maximum(last, 0)]], -1)
        turn_id = _cumsum_from(starts, w.seg_start()).astype(np.int32)
        # per turn: the walk positions of its first rows (its last row is the one before the next turn's first)
        heads = np.flatnonzero(tseg)
        tails = np.append(heads[1:] - 1, w.n - 1) if w.n else heads
        last_in_turn = np.zeros(w.n, dtype=np.bool_)
        last_in_turn[last[tails][last[tails] >= 0]] = True

        def last_rid(mask: Any) -> Any:  # the rowid of the turn's last row where mask holds (-1: none)
            at = np.maximum.accumulate(np.where(mask, idx, -1))[tails] if w.n else heads
            return np.where(at >= heads, rids[pos[np.maximum(at, 0)]], -1)

        started = starts[heads]  # (turn 0, before a session's first turn start, has none)
        if w.n:
            first_rid = np.where(started, rids[pos[heads]], rids[np.minimum.reduceat(pos, heads)])
            n_calls = np.add.reduceat(calls.astype(np.int64), heads)
            lo_ts = np.minimum.reduceat(w.cols["ts_lo"], heads)
            hi_ts = np.maximum.reduceat(w.cols["ts_hi"], heads)
        else:
            first_rid = n_calls = lo_ts = hi_ts = heads
        side = {
            "turn_id": turn_id[heads],
            "first_rid": first_rid,
            "started": started,
            "last_rid": round_rid[tails],
            "model_rid": last_rid(w.cols["has_model"]),
            "finish_rid": last_rid(w.cols["has_finish"]),
            "n_rounds": in_turn[tails].astype(np.int32),
            "n_tool_calls": n_calls.astype(np.int32),
            "start_seq": w.cols["seq"][heads],
            "end_seq": w.cols["seq"][tails],
            "ts_start": arrow.from_numpy(lo_ts, mask=lo_ts == np.iinfo(np.int64).max, type=micros),
            "ts_end": arrow.from_numpy(hi_ts, mask=hi_ts == np.iinfo(np.int64).min, type=micros),
        }
        return {
            "turn_id": w.to_storage(turn_id),
            "round_in_turn": w.to_storage(in_turn.astype(np.int32)),
            "after_tool_round": w.to_storage(tools_before > 0),
            "round_rid": w.to_storage(round_rid),
            "last_in_turn": w.to_storage(last_in_turn),
            "side": side,
        }

    with sql.timed("scan stall numbers"):
        scan.scan_into(con, "scan_stall_ev", "events", "stall_scan", step, side="stall_turn_span")


def _cumsum_from(x: Any, first: Any) -> Any:
    """Running sum of x from each row's segment start `first` (a walk position), the row itself included
    (scan.seg_cumsum with the segment starts found once)."""
    import numpy as np

    c = np.cumsum(x, dtype=np.int64)
    return c - (c[first] - x[first]) if len(c) else c


def _walk(con: duckdb.DuckDBPyConnection) -> None:
    """The temp table `stall_walk_scan`: the bounded re-prompt walk over the rounds of each turn that holds a
    stall, in seq order, as segmented scans over shares of the sessions (queries/replay/stall_replay.sql
    states the rules), one row per walked round (rid: its rowid in `rounds_core`). An episode runs to a breaker (a tool round or a final, which
    belongs to the episode it ends); the dropped counter restarts with each episode, the narrated counter
    only with the turn."""
    import numpy as np

    from stallscan.replay import scan

    def step(w: scan.Walk) -> dict[str, Any]:
        kind, turn = w.cols["kind"], w.cols["turn_id"]
        tstart = w.starts.copy()
        tstart[1:] |= turn[1:] != turn[:-1]
        brk = kind <= 1
        stall = (kind >= 2) & (kind <= 4)
        episode = scan.seg_cumsum(brk, tstart) - brk
        estart = tstart.copy()
        estart[1:] |= brk[:-1]  # a new episode after each breaker
        dropped = scan.seg_cumsum((kind == 2) | (kind == 3), estart)
        narrated = scan.seg_cumsum(kind == 4, tstart)
        delivered = np.ones(w.n, dtype=np.bool_)
        delivered[:-1] = tstart[1:]  # the last round of its turn
        g = scan.seg_ids(estart)
        resolved = np.full(int(g[-1]) + 1 if w.n else 0, -1, dtype=np.int64)
        resolved[g[brk]] = kind[brk]
        cols = {
            "delivered": delivered,
            "episode": episode.astype(np.int32),  # (counts inside a turn: int32 halves the columns held)
            "stall_index": np.where(kind == 4, narrated, dropped).astype(np.int32),
            "resolved": resolved[g].astype(np.int32),
            "episode_nudges": scan.seg_sum(stall & w.cols["nudged"], estart).astype(np.int32),
            "ends_on_stall": scan.seg_any(delivered & stall, estart),
            "delivered_nudged": scan.seg_any(delivered & stall & w.cols["nudged"], estart),
        }
        return {k: w.to_storage(v) for k, v in cols.items()}

    with sql.timed("scan stall walk"):
        rows = cast("tuple[int]", sql.query(con, "replay/scan_stall_walk_rows").fetchone())[0]
        scan.scan_parts(con, "scan_stall_walk", "stall_walk_scan", step, -(-rows // scan.batch_rows()))


def _rows(cur: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    cols = [d[0] for d in cur.description]
    return [dict(zip(cols, r)) for r in cur.fetchall()]


def _scope(con: duckdb.DuckDBPyConnection, scoped: bool) -> None:
    """Temp view `stall_scope`: the report's scope_sessions when scoped, else every replayed session."""
    src = "scope_sessions" if scoped else "turns"
    con.execute(f"CREATE OR REPLACE TEMP VIEW stall_scope AS SELECT DISTINCT session_id FROM {src}")


def list_stalls(
    con: duckdb.DuckDBPyConnection,
    outcome: list[str] | None = None,
    session: str | None = None,
    kind: list[str] | None = None,
    scoped: bool = False,
    limit: int | None = None,
) -> list[dict[str, Any]]:
    """Stall rows (worst first: silent endings, then exhausted, ... newest first), optionally filtered."""
    _scope(con, scoped)
    return _rows(
        sql.query(
            con,
            "replay/stall_list",
            {
                "outcome": outcome or None,
                "session": session,
                "kind": kind or None,
                "lim": limit if limit is not None else 2**31 - 1,
            },
        )
    )


def summary_counts(con: duckdb.DuckDBPyConnection, scoped: bool = False) -> dict[str, Any]:
    """Counts by harness: rounds by round_kind, stalls by outcome, turns by outcome, signature hits."""
    _scope(con, scoped)
    rows = _rows(sql.query(con, "replay/stall_counts"))
    out: dict[str, Any] = {}
    for r in rows:
        out.setdefault(r["harness"], {}).setdefault(r["what"], {})[r["key"]] = r["n"]
    return out


def silent_rates(con: duckdb.DuckDBPyConnection, scoped: bool = False) -> dict[str, Any]:
    """Silent plan-as-answer endings per 1,000 turns, by harness, by model and by provider."""
    _scope(con, scoped)
    rows = _rows(sql.query(con, "replay/stall_rates"))
    out: dict[str, Any] = {"harness": [], "model": [], "provider": []}
    for r in rows:
        dim = r.pop("dimension")
        out[dim].append(r)
    return out


def recovery(con: duckdb.DuckDBPyConnection, scoped: bool = False) -> dict[str, Any]:
    """Recovery after the 1st, 2nd, 3rd ... nudge, per harness, and the bounds recovering 95% / 99%."""
    _scope(con, scoped)
    rows = _rows(sql.query(con, "replay/stall_recovery"))
    out: dict[str, Any] = {}
    for r in rows:
        h = out.setdefault(
            r["harness"], {"episodes": 0, "recovered": 0, "curve": [], "bound_95": None, "bound_99": None}
        )
        h["episodes"], h["recovered"] = r["episodes"], r["recovered_total"]
        h["curve"].append(
            {
                "nudges": r["nudges"],
                "reached": r["reached"],
                "recovered_here": r["recovered_here"],
                "rate": r["rate"],
                "cumulative_share": r["cumulative_share"],
            }
        )
        if h["bound_95"] is None and r["cumulative_share"] is not None and r["cumulative_share"] >= 0.95:
            h["bound_95"] = r["nudges"]
        if h["bound_99"] is None and r["cumulative_share"] is not None and r["cumulative_share"] >= 0.99:
            h["bound_99"] = r["nudges"]
    return out


def bound_sweep(con: duckdb.DuckDBPyConnection, bounds: list[int], scoped: bool = False) -> list[dict[str, Any]]:
    """For each retry bound N: how many logged endings the fixed harness with bound N would change.

    `would_reprompt`: turns that ended on a plan (silent / exhausted) at a stall index <= N, which bound N
    would have re-prompted instead of delivering; `would_deliver`: episodes that recovered or were answered
    only after more than N stalls, which bound N would have cut short by delivering stall N+1 as the answer.
    """
    _scope(con, scoped)
    return _rows(sql.query(con, "replay/stall_bounds", {"bounds": list(bounds)}))


def signature_hits(con: duckdb.DuckDBPyConnection, scoped: bool = False) -> list[dict[str, Any]]:
    """Per signature: rounds it matched, rounds it decided (recorded as `signature`), vetoed matches."""
    _scope(con, scoped)
    return _rows(sql.query(con, "replay/stall_signature_hits"))
