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

from stallscan.replay import stall_data, stall_rules, stall_scans
from stallscan.replay.stall_rules import NARRATED_BOUND, RETRY_BOUND
from stallscan.store import sql

STALL_KINDS = ("dropped_tool_call", "no_tool", "narrated_intent")
# what a stall episode ended as (stalls.outcome), and the short names `stallscan stalls --outcome` accepts
OUTCOMES = ("silent_plan_as_answer", "exhausted", "abandoned", "recovered", "answered")
OUTCOME_ALIASES = {"silent": "silent_plan_as_answer", "plan": "silent_plan_as_answer"}
# at most this many distinct tails: the signatures matched in one statement over the (tail, signature) pairs, each
# regex compiled per pair (queries/replay/stall_sig_match_rows.sql), else one UNION ALL copy per signature
ROW_MATCH_MAX_TAILS = 3
# at most this many tool calls a [[background]] entry's tool regex matched (stall_calls): the entries matched in one
# statement over the (call, entry) pairs, each regex compiled per pair (queries/replay/stall_background_match_rows.sql),
# else one statement per entry, its regexes constants
BG_ROW_MATCH_MAX_CALLS = 16
# the stored tables of the rounds: every reply's row (rounds_core) and its columns that are empty on most replies,
# stored only where set (queries/replay/stall_rounds.sql, stall_rounds_side.sql); the view rounds_narrow joins them
ROUND_TABLES = ("rounds_core", "rounds_hits", "rounds_nudges", "rounds_evidence")
# the views over them (and turns_core), in the order they are made: each reads the one before
VIEWS = (
    ("rounds_narrow", "replay/stall_rounds_narrow_view"),
    ("rounds", "replay/stall_rounds_view"),
    ("turns_by_seq", "replay/stall_turns_by_seq_view"),
    ("turns", "replay/stall_turns_view"),
)


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
        upstream: tuple[str, ...] = ("user_labels_narrow",)  # (the labels' codes: stall_turn_starts_labels.sql)
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
        # (rounds_narrow, rounds: views over them and events; turns_by_seq: a view over turns_core, turns over it and
        # events)
        ROUND_TABLES + ("stalls", "turns_core"),
        upstream=upstream,
    )
    _rounds_views(con, mode == "full")
    counts = cast(
        "tuple[int, int, int, str | None]",
        con.execute(
            "SELECT (SELECT count(*) FROM rounds_core), (SELECT count(*) FROM stalls), (SELECT count(*) FROM turns_core), "
            "(SELECT any_value(data_version) FROM stall_replay_info)"
        ).fetchone(),
    )
    version = counts[3] or stall_data.load().version  # (reused tables: no need to parse the rule files)
    return ReplayInfo(retry_bound, narrated_bound, used, version, counts[0], counts[1], counts[2])


def _rounds_views(con: duckdb.DuckDBPyConnection, replaced: bool) -> None:
    """The views `rounds_narrow` (queries/replay/stall_rounds_narrow_view.sql), `rounds`
    (queries/replay/stall_rounds_view.sql), `turns_by_seq` (queries/replay/stall_turns_by_seq_view.sql) and `turns`
    (queries/replay/stall_turns_view.sql) in the current schema,
    made anew after a full replay replaced the tables and else only when missing: a database written before a view
    holds a table of its name (rounds, rounds_narrow, turns), dropped first. An incremental run (its DELETE / INSERT
    keep every table and its columns) or a reused replay that finds every view writes nothing; the four names are
    looked up in one catalog query."""
    kinds: dict[str, set[str]] = {name: set() for name, _ in VIEWS}
    for name, kind in con.execute(
        "SELECT table_name, 'table' FROM duckdb_tables() WHERE database_name = current_database() "
        "AND schema_name = current_schema() AND list_contains($n::VARCHAR[], table_name) UNION ALL "
        "SELECT view_name, 'view' FROM duckdb_views() WHERE database_name = current_database() "
        "AND schema_name = current_schema() AND list_contains($n::VARCHAR[], view_name)",
        {"n": [name for name, _ in VIEWS]},
    ).fetchall():
        kinds[name].add(kind)
    for name, query in VIEWS:
        if "view" in kinds[name] and not replaced:
            continue
        if "table" in kinds[name]:
            sql.drop_stored_table(con, name)
        sql.run(con, query)


def _compute(con: duckdb.DuckDBPyConnection, retry_bound: int, narrated_bound: int, used: str) -> None:
    """(Re)create the ROUND_TABLES, `stalls`, `turns` (in the schema the search path names) from `events`."""
    from stallscan.replay import derive

    data = stall_data.install(con)
    if used == "labels":
        sql.run(con, "replay/stall_turn_starts_labels")
    else:
        sql.run(con, "replay/stall_turn_starts")
    tools = "|".join(f"(?:{bg.tool})" for bg in data.background) or None  # (any entry's tool: stall_call_hits)
    sql.run(con, "replay/stall_lookups", {"bg_tools": tools})
    stall_scans.turn_numbers(con)
    sql.run(con, "replay/stall_rounds_prep")
    # a signature that can match no tail is not run (its statement would append nothing): none when there is no
    # tail (an append of a session without a text-only reply), the non-ASCII ones when every tail is ASCII, those
    # whose max_chars every tail's shortest reply exceeds (stall_sig_match.sql's own skips, asked once); and no
    # [[background]] entry is matched when no tool call's name matched any entry's tool (stall_calls empty: each
    # entry's statement would insert nothing), asked in the same statement
    n_tails, all_ascii, shortest, n_calls = cast(
        "tuple[int, bool | None, int | None, int]",
        con.execute(
            "SELECT count(*), bool_and(ascii), min(min_chars), (SELECT count(*) FROM stall_calls) FROM stall_tails"
        ).fetchone(),
    )
    if n_calls and n_calls <= BG_ROW_MATCH_MAX_CALLS:  # every entry in one statement over the (call, entry) pairs
        sql.run(con, "replay/stall_background_match_rows")
    else:
        # one statement per entry, its regexes compiled once (none when no call matched)
        for i, bg in enumerate(data.background if n_calls else ()):
            sql.run(
                con,
                "replay/stall_background_match",
                {"ord": i, "id": bg.id, "tool": bg.tool, "arguments": bg.arguments},
            )
    sql.run(con, "replay/stall_turn_evidence")
    match_signatures(
        con,
        [
            (i, sig)
            for i, sig in enumerate(data.signatures)
            if n_tails
            and not (all_ascii and sig.non_ascii)
            and not (sig.max_chars is not None and (shortest or 0) > sig.max_chars)
        ],
        by_row=n_tails <= ROW_MATCH_MAX_TAILS,
    )
    try:
        sql.run(con, "replay/stall_rounds")
    except BaseException:  # the file turns an optimizer rule and the insertion order off around its rounds
        # statement and back on after it: back on here when that one fails (in a transaction: sql.rollback resets
        # them); after a success the file's own RESETs ran
        sql.after_failure(con, "RESET disabled_optimizers", True)
        sql.after_failure(con, "RESET SESSION preserve_insertion_order", True)
        raise
    sql.run(con, "replay/stall_rounds_side")
    # an incremental run (derive.in_scratch: a few sessions) frees its scans' tables with the rest at its end, a
    # full replay as soon as they are read (before the walk, after the stall rows)
    few = derive.in_scratch()
    if not few:
        con.execute("DROP TABLE stall_scan; DROP TABLE stall_replies")  # (freed before the walk)
    if stall_scans.walk(con, skip_empty=few) or not few:
        sql.run(con, "replay/stall_replay", {"retry_bound": retry_bound, "narrated_bound": narrated_bound})
    else:  # no turn of the changed sessions holds a stall: stall_walk made empty, its statement not planned
        sql.run(con, "replay/stall_replay_none")
        with sql.timed("replay/stall_replay#1"):  # (stalls from it: empty, its columns as always)
            con.execute(sql.load("replay/stall_replay")[-1])
    if not few:
        con.execute("DROP TABLE stall_walk_scan")
    sql.run(con, "replay/stall_turns")
    if not few:  # (an incremental run's scratch copy would go with the scratch: the database's stays the full one's)
        con.execute(
            "CREATE OR REPLACE TABLE stall_replay_info AS SELECT $r::INTEGER AS retry_bound, "
            "$n::INTEGER AS narrated_bound, $s AS segmentation, $v AS data_version, now() AS replayed_at",
            {"r": retry_bound, "n": narrated_bound, "s": used, "v": data.version},
        )
    # the temp tables and variables left (stall_rounds_prep.sql's limits, key lengths and contains sentinels,
    # stall_rounds.sql's part size): nothing left on the connection; one call for the 23 statements (26 after an
    # incremental run)
    temp = _TEMP_TABLES + (("stall_scan", "stall_replies", "stall_walk_scan") if few else ())
    con.execute("; ".join([f"DROP TABLE IF EXISTS {t}" for t in temp] + [f"RESET VARIABLE {v}" for v in _VARIABLES]))


# what _compute leaves on the connection, dropped / reset at its end
_TEMP_TABLES = (
    "stall_nudges",
    "stall_prompt_hits",
    "stall_turn_span",
    "stall_turn_evidence",
    "stall_sentinel_keys",
    "stall_tail_caps",
    "stall_tails",
    "stall_tail_matches",
    "stall_sig_hits",
    "stall_model_provider",
    "stall_walk",
    "stall_turn_starts",
    "stall_calls",
    "stall_bg_hits",
    "stall_nudge_events",
    "stall_call_hits",
    "stall_mode_hits",
)
_VARIABLES = (
    "stall_tail_chars",
    "stall_cap",
    "stall_prompt_key",
    "stall_sentinel_key",
    "stall_sentinel_any",
    "stall_reply_part",
)


def match_signatures(
    con: duckdb.DuckDBPyConnection, sigs: list[tuple[int, stall_rules.Signature]], by_row: bool = False
) -> None:
    """Append to stall_tail_matches the tails each of `sigs` ((ord, signature)) matches
    (queries/replay/stall_sig_match.sql once per signature, in one statement). by_row: every signature of
    stall_signatures in one statement over the (tail, signature) pairs instead (stall_sig_match_rows.sql: the
    same rows, its skips per pair; `sigs` only says whether any can match), for a handful of tails."""
    if by_row:
        if sigs:
            sql.run(con, "replay/stall_sig_match_rows")
        return
    params = [{"ord": i, "id": s.id, "kind": s.kind, "regex": s.regex, "max_chars": s.max_chars} for i, s in sigs]
    sql.union_all(con, "stall_tail_matches", "replay/stall_sig_match", params)


def _rows(cur: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    cols = [d[0] for d in cur.description]
    return [dict(zip(cols, r)) for r in cur.fetchall()]


def _scope(con: duckdb.DuckDBPyConnection, scoped: bool) -> None:
    """Temp view `stall_scope`: the report's scope_sessions when scoped, else every replayed session."""
    src = "scope_sessions" if scoped else "turns_by_seq"
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
