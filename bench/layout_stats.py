#!/usr/bin/env python3
"""How a database's `events` rows lie in storage order: runs per session, run lengths, seq steps back.

    python bench/layout_stats.py /tmp/ingested.duckdb [--by-format]

A run is a stretch of adjacent rows (in rowid order: the table's storage order, the order a scan hands rows
out) of one session. A session written in walk order is one run with seq rising; an ingest writes each batch's
rows branch by branch of its reader's SQL (Claude Code: user lines, queued input, system lines, then the
assistant replies, merged by an aggregate, in two runs), so a session's rows sit in a few runs spread over
its batch. A step back is a row whose seq is below the previous row of its session in storage order.
"""

from __future__ import annotations

import argparse

import duckdb

STATS = """
WITH o AS (SELECT rowid AS r, session_id, source_format, seq FROM events),
w AS (SELECT *, lag(session_id) OVER (ORDER BY r) AS prev_session,
             lag(seq) OVER (PARTITION BY session_id ORDER BY r) AS prev_seq FROM o),
runs AS (SELECT *, sum((prev_session IS DISTINCT FROM session_id)::INT) OVER (ORDER BY r) AS run FROM w),
rl AS (SELECT run, any_value(session_id) AS session_id, count(*) AS n FROM runs GROUP BY run),
per AS (SELECT session_id, count(*) AS n_runs FROM rl GROUP BY session_id),
ses AS (SELECT session_id, any_value(source_format) AS fmt, count(*) AS n, max(r) - min(r) + 1 AS span,
               count(*) FILTER (WHERE seq < prev_seq) AS backs FROM runs GROUP BY session_id)
SELECT {key} AS fmt, count(*) AS sessions, sum(n)::BIGINT AS events, sum(n_runs)::BIGINT AS runs,
       round(sum(n) / sum(n_runs), 1) AS mean_run, round(avg(n_runs), 2) AS runs_per_session,
       max(n_runs) AS max_runs, count(*) FILTER (WHERE n_runs = 1) AS one_run_sessions,
       sum(backs)::BIGINT AS seq_backs, count(*) FILTER (WHERE backs > 0) AS sessions_stepping_back,
       round(median(span / n), 1) AS median_spread
FROM ses JOIN per USING (session_id) GROUP BY ALL ORDER BY 1
"""
RUNS = """
WITH w AS (SELECT rowid AS r, session_id, lag(session_id) OVER (ORDER BY rowid) AS prev_session FROM events),
runs AS (SELECT sum((prev_session IS DISTINCT FROM session_id)::INT) OVER (ORDER BY r) AS run FROM w),
rl AS (SELECT count(*) AS n FROM runs GROUP BY run)
SELECT quantile_disc(n, [0.1, 0.25, 0.5, 0.75, 0.9, 0.99]) AS run_length_quantiles, max(n) AS longest_run FROM rl
"""


def layout(con: duckdb.DuckDBPyConnection, by_format: bool = False) -> list[dict[str, object]]:
    """One dict per source format (or one for the whole table): the STATS columns."""
    cur = con.execute(STATS.format(key="fmt" if by_format else "'all'"))
    names = [d[0] for d in cur.description]
    return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("db")
    ap.add_argument("--by-format", action="store_true", help="a line per source format")
    args = ap.parse_args()
    con = duckdb.connect(args.db, read_only=True)
    for row in layout(con, args.by_format):
        print(" ".join(f"{k}={v}" for k, v in row.items()))
    q, longest = con.execute(RUNS).fetchone() or ([], 0)
    print(f"run lengths p10/p25/p50/p75/p90/p99 = {'/'.join(map(str, q))}, longest {longest}")


if __name__ == "__main__":
    main()
