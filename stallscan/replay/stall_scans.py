"""The stall replay's two column scans (stallscan/replay/scan.py), called by stallscan.replay.stalls:

  turn_numbers(con): the temp tables `stall_scan` (per looked-up event: its turn, its turn's last reply so far),
      `stall_replies` (per reply: its turn, its place in it, ...) and
      `stall_turn_span` (per turn: its span, replies, and the rowids `turns` reads its ids, model and finish by);
  walk(con): the temp table `stall_walk_scan`, the bounded re-prompt walk over the turns that hold a stall.

queries/replay/stall_rounds_prep.sql, stall_turns.sql and stall_replay.sql read them.
"""

from __future__ import annotations

from typing import Any, cast

import duckdb

from stallscan.store import sql


def turn_numbers(con: duckdb.DuckDBPyConnection) -> None:
    """The temp table `stall_scan`: the turn number (human turn starts so far in its session) of the events
    queries/replay/stall_lookups.sql found (the nudges' events, the background calls', the approval-mode marked
    ones: queries/replay/scan_stall_lookups.sql) and the rowid of the turn's last reply at or before each
    (round_rid, -1: none; the round a nudge after it reacts to); those rows only (at 10M generated events every
    event's row cost 0.29 CPU s to write, and the three statements that read it probed all 10M), and the temp table `stall_replies`, the replies' rows only (rid, turn_id), in storage order (queries/replay/
    stall_rounds.sql joins it with the replies on the rowid), with, counted inside the turn, a reply's place
    in it (round_in_turn), whether a tool round came before it in the turn (after_tool_round) and whether it is
    its turn's last (last_in_turn): segmented running sums (stallscan/replay/scan.py) over batches of whole
    sessions (scan.scan_into). And the temp table
    `stall_turn_span`, one row per turn (a session's rows from a turn start, or from its first row, to the next
    turn start): the rowid of its start (first_rid; turn 0, before the session's first turn
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
        lookups = np.unique(scan.fetch_rids(con, "scan_stall_lookups"))  # (sorted, each once)
    micros = pa.timestamp("us", tz="UTC")

    def step(w: scan.Walk) -> dict[str, Any]:
        rids = w.cols["rid_storage"]  # (ascending: storage order)
        starts = w.mark_rids(_inside(turn_starts, rids))  # only the turn starts inside this batch's rowids
        reply, calls = w.cols["reply"], w.cols["reply_calls"]
        tool = calls > 0
        tseg = w.starts | starts  # a turn's rows: from its start (or the session's first row) to the next
        idx = np.arange(w.n, dtype=np.int64)
        first = scan.seg_start(tseg)  # each row's turn's first walk position (found once, used twice)
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
            at = np.maximum.reduceat(np.where(mask, idx, -1), heads) if w.n else heads  # (a turn's greatest)
            return np.where(at >= heads, rids[pos[np.maximum(at, 0)]], -1)

        started = starts[heads]  # (turn 0, before a session's first turn start, has none)
        if w.n:
            first_rid = np.where(started, rids[pos[heads]], rids[np.minimum.reduceat(pos, heads)])
            n_calls = np.add.reduceat(calls.astype(np.int64), heads)
            lo_ts = np.minimum.reduceat(w.cols["ts_lo"], heads)
            hi_ts = np.maximum.reduceat(w.cols["ts_hi"], heads)
        else:
            first_rid = n_calls = lo_ts = hi_ts = heads
        span = {
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
        turn_id = w.to_storage(turn_id)
        want = _inside(lookups, rids)  # the looked-up rows of this batch: their storage positions
        found = np.searchsorted(rids, want)
        found = found[rids[found] == want]
        looked_up = {"rid": rids[found], "turn_id": turn_id[found], "round_rid": w.to_storage(round_rid)[found]}
        at = np.flatnonzero(w.to_storage(reply))  # the replies' storage positions, ascending
        replies = {
            "rid": rids[at],
            "turn_id": turn_id[at],
            "round_in_turn": w.to_storage(in_turn.astype(np.int32))[at],
            "after_tool_round": w.to_storage(tools_before > 0)[at],
            "last_in_turn": w.to_storage(last_in_turn)[at],
        }
        return {"stall_scan": looked_up, "stall_turn_span": span, "stall_replies": replies}

    with sql.timed("scan stall numbers"):
        sides = ("stall_scan", "stall_turn_span", "stall_replies")
        scan.scan_into(con, "scan_stall_ev", "events", None, step, sides=sides)


def _inside(rids: Any, batch: Any) -> Any:
    """The part of the ascending rowids `rids` between the first and the last of a batch's (ascending) rowids."""
    import numpy as np

    if not len(batch):
        return rids[:0]
    return rids[np.searchsorted(rids, batch[0], side="left") : np.searchsorted(rids, batch[-1], side="right")]


def _cumsum_from(x: Any, first: Any) -> Any:
    """Running sum of x from each row's segment start `first` (a walk position), the row itself included
    (scan.seg_cumsum with the segment starts found once)."""
    import numpy as np

    c = np.cumsum(x, dtype=np.int64)
    return c - (c[first] - x[first]) if len(c) else c


def walk(con: duckdb.DuckDBPyConnection) -> None:
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
