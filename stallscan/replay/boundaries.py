"""The router's turn-boundary decision, replayed (production path: queries/replay/turn_boundaries.sql
and turn_boundaries_view.sql).

`replay_boundaries(con, threshold=2.0)` (re)creates the view `turn_boundaries`, one row per user-role
event (and tool result) of `events` (stored: table `turn_boundaries_narrow`, the columns the decisions are
computed from; the view, queries/replay/turn_boundaries_view.sql, computes the rest):

    session_id, seq, event_id, ts   the event
    gap_s              seconds from the end of the previous assistant reply to this event; NULL when the
                       log gives no trustworthy gap (ts_quality not per_message, a missing timestamp, or a
                       negative gap from clock skew; the raw value is kept in gap_raw_s)
    prev_reply_status  final / empty / truncated / cancelled / failed / tool_calls, NULL when no reply before
    initiator          x-initiator header as logged (user / agent) or NULL
    decided_by         header / first / completion / gap / no_time (which rule decided)
    decision           human / continuation
    origin             the truth from user_labels (human / automatic / tool_result)
    is_human_turn      origin = human, or an automatic envelope carrying a person's text (human_content)
    error              none / auto_as_human / human_as_auto, or not_request for records that are not a
                       model request of their own (user_labels.starts_request = false; not judged)
    gap_only_decision, gap_only_error        the gap rule alone (NULL: no gap in the log)
    header_only_decision, header_only_error  the header alone (NULL: no header logged)
    source_format, role, kind, origin_rule, human_content, starts_request, prev_event_id, gap_raw_s,
    ts_quality, threshold

The previous reply is the last assistant event before the user event in the same session (seq order);
its status comes from its own fields: finish_norm length -> truncated, cancelled -> cancelled,
error / content_filter (or a harness-made placeholder such as Claude's <synthetic> "API Error" line) ->
failed, any tool call -> tool_calls, blank text (or Hermes' "(empty)") -> empty, else final. Claude's
stop_reason is null on most lines and Codex has no finish reason, so for them a reply with no tool call
and non-blank text is final (Codex's phase only names the channel the text went to).
A plain-Python statement of the same decision lives in stallscan/boundaries_ref.py.
"""

from __future__ import annotations

import os
from typing import Any

import duckdb

from stallscan.replay.boundaries_ref import GAP_THRESHOLD_S
from stallscan.store import sql
from stallscan.store.errors import StallscanError


def replay_boundaries(
    con: duckdb.DuckDBPyConnection,
    threshold: float = GAP_THRESHOLD_S,
    relabel: bool = False,
    config: str | os.PathLike[str] | dict[str, Any] | None = None,
    summary: bool = True,
) -> dict[str, Any]:
    """(Re)create `turn_boundaries` at this threshold. Labels events first when `user_labels` is missing
    (or when relabel=True). Returns counts by decided_by and by error; summary=False leaves them out (an
    empty dict: a caller that reads the tables only need not pay a pass over every row of the view)."""
    if threshold is None or not threshold >= 0:
        raise StallscanError(
            f"threshold must be a number of seconds >= 0, not {threshold!r}", hint="e.g. --threshold 2.0"
        )
    from stallscan.replay import derive
    from stallscan.replay.labels import label_events, refresh_labels
    from stallscan.store import stamps

    if relabel or not sql.has_table(con, "user_labels_narrow", schema=None):  # (the labels' codes, which it reads)
        label_events(con, config)
    else:
        refresh_labels(con)  # stamped labels behind the events: relabel the changed sessions, same config
    labels = stamps.get(con, "user_labels")
    inputs = {"threshold": float(threshold), "labels": labels["key"] if labels else None}

    def compute(c: duckdb.DuckDBPyConnection) -> None:
        from stallscan.replay.boundary_variants import replay_variants

        _prev_replies(c)
        complete = bool(sql.query(c, "replay/turn_boundaries_labels").fetchall()[0][0])
        sql.run(c, "replay/label_structural")
        sql.run(c, "replay/turn_boundaries", {"threshold": float(threshold), "complete": complete})
        c.execute("DROP TABLE IF EXISTS temp.tb_scan")
        whole = not derive.in_scratch()  # (an incremental run's scratch: only what its statements read)
        _view(c, whole)
        # the rule variants beside the router order (turn_boundary_variants)
        replay_variants(c, counts=False, stored=True, view=whole)

    derive.run(
        con,
        "turn_boundaries",
        inputs,
        compute,
        # (turn_boundaries: a view over turn_boundaries_narrow; turn_boundary_variants: a view over it and the marked rows)
        ("turn_boundaries_narrow", "turn_boundary_variants_marked"),
        # (the labels' codes; the view user_labels over them)
        upstream=("user_labels_narrow", "user_labels_rules", "user_labels_uncoded"),
    )
    if not summary:
        con.complete()  # (the stamps' lookups leave a DB-API result half read, which would block a relation)
        return {}
    rows = con.execute(  # (one pass over the view for both counts)
        'SELECT decided_by, "error", GROUPING(decided_by, "error") AS g, count(*) FROM turn_boundaries_by_seq '
        'GROUP BY GROUPING SETS ((decided_by), ("error")) ORDER BY ALL'
    ).fetchall()
    decided = {r[0]: r[3] for r in rows if r[2] == 1}  # (GROUPING: bit 0 set = "error" not grouped)
    errors = {r[1]: r[3] for r in rows if r[2] == 2}
    return {"threshold": float(threshold), "decided_by": decided, "error": errors}


def _view(con: duckdb.DuckDBPyConnection, whole: bool = True) -> None:
    """The views `turn_boundaries_by_seq` and `turn_boundaries` in the current schema (a database written before
    them holds a table of that name: dropped first). whole=False (an incremental run's scratch schema, which holds
    no such table): `turn_boundaries_by_seq` alone, the one the rule variants read (the second view and the
    catalog look-up cost some 5 CPU ms a report after one new session)."""
    if whole:
        sql.drop_stored_table(con, "turn_boundaries")
    sql.run(con, "replay/turn_boundaries_view")
    if whole:
        sql.run(con, "replay/turn_boundaries_view_ids")


def _prev_replies(con: duckdb.DuckDBPyConnection) -> None:
    """The temp table `tb_scan`: for every user / tool event, in storage order, the previous reply in its session
    (event id and completion report) and the gap from that reply's end to the event when both times are
    per-message (stallscan/replay/scan_bounds.py, in batches of whole sessions)."""
    from stallscan.replay.scan_bounds import prev_replies

    prev_replies(con)
