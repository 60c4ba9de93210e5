"""The stall replay's two column scans (stallscan/replay/scan.py), called by stallscan.replay.stalls:

  turn_numbers(con): the temp tables `stall_scan` (per looked-up event: its turn, its turn's last reply so far),
      `stall_replies` (per reply: its turn, its place in it, ...) and
      `stall_turn_span` (per turn: its span, replies, and the rowids `turns` reads its harness, last reply's seq, model and finish by);
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
    event's row cost 0.29 CPU s to write, and the three statements that read it probed all 10M), and the temp
    table `stall_replies`, the replies' rows only (rid, turn_id, place), in storage order (queries/replay/
    stall_rounds.sql reads it beside the replies by position, in four rowid ranges), with, counted inside the turn,
    in `place` a reply's place in it (round_in_turn, bits 2-30), whether a tool round came before it in the turn
    (after_tool_round, bit 1) and whether it is its turn's last (last_in_turn, bit 0): segmented running sums
    (stallscan/replay/scan.py) over batches of whole sessions (scan_batches.scan_into). And the temp table
    `stall_turn_span`, one row per turn (a session's rows from a turn start, or from its first row, to the next
    turn start): the rowid of its start (first_rid; turn 0, before the session's first turn
    start, has none: its first row in storage order), the rowids of its last reply,
    of its last reply that names a model and of its last that names a finish reason (last_rid, model_rid,
    finish_rid; -1: none), its replies and their tool calls (n_rounds, n_tool_calls), its first and last seq and
    its first and last time (the rows' least ts and greatest ts_end else ts; NULL when no row has one)."""
    import numpy as np
    import pyarrow as pa

    from stallscan.replay import scan, scan_batches
    from stallscan.store import arrow

    with sql.timed("scan mark scan_stall_starts"):
        # (sorted: each batch marks its slice; a stable sort, as the join hands them out in a few ascending runs:
        # at 10M generated events 0.002-0.02 against 0.065 CPU s for numpy's default sort)
        turn_starts = np.sort(scan.fetch_rids(con, "scan_stall_starts"), kind="stable")
        lookups = np.sort(scan.fetch_rids(con, "scan_stall_lookups"), kind="stable")
        lookups = lookups[np.append(True, lookups[1:] != lookups[:-1])] if len(lookups) else lookups  # (each once)
    micros = pa.timestamp("us", tz="UTC")

    def step(w: scan.Walk) -> dict[str, Any]:
        # Counted over the replies' positions and one row per turn, not over every row: a reply's place in its turn
        # and the tool rounds before it are running counts over the replies (57 % of the generated events), a turn's
        # number one over its first rows; only the turns' first / last row and times are reductions over every row.
        rids = w.cols["rid_storage"]  # (ascending: storage order)
        starts = w.mark_rids(_inside(turn_starts, rids))  # only the turn starts inside this batch's rowids
        info = w.cols["reply_info"]  # (scan_stall_ev.sql: -1 no reply, else calls * 4 + model 1 + finish 2)
        tseg = w.starts | starts  # a turn's rows: from its start (or the session's first row) to the next
        heads = np.flatnonzero(tseg)  # per turn: the walk position of its first row
        tails = np.append(heads[1:] - 1, w.n - 1) if w.n else heads  # (its last: the one before the next's first)
        turn_of = np.cumsum(tseg, dtype=np.int32) - 1  # each row's turn (0, 1, ... in this batch)
        # walk positions -> rowids (storage order: the walk order unless the batch was sorted)
        perm = w.perm

        def rid_at(at: Any) -> Any:
            return rids[at] if perm is None else rids[perm[at]]

        started = starts[heads]  # (turn 0, before a session's first turn start, has none)
        # a turn's number in its session: the turn starts from the session's first row to the turn's first
        turn_id = _cumsum_from(started, scan.seg_start(w.starts[heads])).astype(np.int32)
        r = np.flatnonzero(info >= 0)  # the replies' walk positions, ascending
        rinfo = info[r]  # (the replies' own: calls * 4 + model 1 + finish 2)
        rturn = turn_of[r]
        rhead = np.ones(len(r), dtype=np.bool_)  # a turn's first reply
        rhead[1:] = rturn[1:] != rturn[:-1]
        rlast = np.ones(len(r), dtype=np.bool_)  # a turn's last reply
        rlast[:-1] = rhead[1:]
        rfirst = scan.seg_start(rhead)  # the index (among the replies) of its turn's first reply
        round_in_turn = (np.arange(len(r), dtype=np.int32) - rfirst.astype(np.int32) + 1).astype(np.int32)
        rcalls = rinfo >> 2
        tool = rcalls > 0
        after_tool_round = _cumsum_from(tool, rfirst) - tool > 0  # a tool round before it in the turn
        n_rounds = np.bincount(rturn, minlength=len(heads)).astype(np.int32)

        rstart = np.flatnonzero(rhead)  # the turns that have a reply: their first reply (among the replies)
        rturns = rturn[rstart]  # and their turn
        last_at = r[rlast]  # per turn with a reply: its last reply's walk position

        def last_rid(mask: Any) -> Any:  # per turn: the rowid of its last reply where mask holds (-1: none)
            out = np.full(len(heads), -1, dtype=np.int64)
            if mask is None or mask.all():  # (every reply: its turn's last; usually every reply names both)
                out[rturns] = rid_at(last_at)
                return out
            # (a turn's greatest position among its replies where mask holds)
            at = np.maximum.reduceat(np.where(mask, r, -1), rstart)
            out[rturns] = np.where(at >= 0, rid_at(np.maximum(at, 0)), -1)
            return out

        if w.n:
            first_rid = rid_at(heads)
            if w.perm is not None:  # (turn 0 without a start: its first row in storage order)
                first_rid = np.where(started, first_rid, rids[np.minimum.reduceat(w.perm, heads)])
            n_calls: Any = np.zeros(len(heads), dtype=np.int32)  # (a turn's tool calls: its replies')
            if len(r):
                n_calls[rturns] = np.add.reduceat(rcalls, rstart)
            lo_ts = np.minimum.reduceat(w.cols["ts_lo"], heads)
            hi_ts = np.maximum.reduceat(w.cols["ts_hi"], heads)
        else:
            first_rid = n_calls = lo_ts = hi_ts = heads
        span = {
            "turn_id": turn_id,
            "first_rid": first_rid,
            "last_rid": last_rid(None),
            "model_rid": last_rid((rinfo & 1) > 0),
            "finish_rid": last_rid((rinfo & 2) > 0),
            "n_rounds": n_rounds,
            "n_tool_calls": n_calls.astype(np.int32),
            "start_seq": w.at("seq", heads),  # (seq read at the turns' ends only: never gathered whole)
            "end_seq": w.at("seq", tails),
            "ts_start": arrow.from_numpy(lo_ts, mask=lo_ts == np.iinfo(np.int64).max, type=micros),
            "ts_end": arrow.from_numpy(hi_ts, mask=hi_ts == np.iinfo(np.int64).min, type=micros),
        }
        # the looked-up rows: their turn and the turn's last reply at or before them (round_rid, -1: none)
        want = _inside(lookups, rids)
        found = np.searchsorted(rids, want)
        found = found[rids[found] == want]  # their storage positions
        if w.perm is None:
            at = found
        else:
            inv = np.empty(w.n, dtype=np.int64)
            inv[w.perm] = np.arange(w.n, dtype=np.int64)
            at = inv[found]  # their walk positions
        k = np.searchsorted(r, at, side="right") - 1  # the last reply at or before each
        prev = r[np.maximum(k, 0)] if len(r) else at
        same = (k >= 0) & (turn_of[prev] == turn_of[at]) if len(r) else np.zeros(len(at), dtype=np.bool_)
        looked_up = {
            "rid": rids[found],
            "turn_id": turn_id[turn_of[at]],
            "round_rid": np.where(same, rid_at(prev), -1),
        }
        if len(r) >= 1 << 29:  # (place: round_in_turn in bits 2-30 of an INTEGER)
            raise ValueError("stall scan: more than 2**29 replies in one batch")
        replies = {
            "rid": rid_at(r),
            "turn_id": turn_id[rturn],
            # round_in_turn << 2 | after_tool_round << 1 | last_in_turn: one INTEGER where a column of each cost more
            # to write and read back (two boolean columns of 5.75M replies: about 0.1 CPU s, docs/replay-scan.md
            # "stall18"); queries/replay/stall_rounds.sql takes it apart
            "place": (round_in_turn << 2) | (after_tool_round.astype(np.int32) << 1) | rlast.astype(np.int32),
        }
        if w.perm is not None:  # (the replies' rows in storage order: each reply's index put at its storage position,
            # then read in storage order; a scatter, where np.argsort(w.perm[r]) sorted them)
            slot = np.full(w.n, -1, dtype=np.int64)
            slot[w.perm[r]] = np.arange(len(r), dtype=np.int64)
            o = slot[slot >= 0]
            replies = {name: v[o] for name, v in replies.items()}
        return {"stall_scan": looked_up, "stall_turn_span": span, "stall_replies": replies}

    with sql.timed("scan stall numbers"):
        sides = ("stall_scan", "stall_turn_span", "stall_replies")
        scan_batches.scan_into(con, "scan_stall_ev", "events", None, step, sides=sides)


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


def walk(con: duckdb.DuckDBPyConnection, skip_empty: bool = False) -> int:
    """The temp table `stall_walk_scan`: the bounded re-prompt walk over the rounds of each turn that holds a
    stall, in seq order, as segmented scans over shares of the sessions (queries/replay/stall_replay.sql
    states the rules), one row per walked round (rid: its rowid in `rounds_core`). An episode runs to a breaker (a tool round or a final, which
    belongs to the episode it ends); the dropped counter restarts with each episode, the narrated counter
    only with the turn. Returns the number of rounds walked; skip_empty: with none, the table is not made."""
    import numpy as np

    from stallscan.replay import scan, scan_batches

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
        if rows or not skip_empty:
            scan_batches.scan_parts(
                con, "scan_stall_walk", "stall_walk_scan", step, -(-rows // scan_batches.batch_rows())
            )
    return rows
