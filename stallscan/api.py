"""Notebook API: a stallscan database as polars DataFrames, through the same core functions as the CLI.

    import stallscan
    s = stallscan.open("stallscan.duckdb")
    s.events(session="abc")             # rows of `events`
    s.stalls(outcome="silent")          # what `stallscan stalls --outcome silent` lists
    s.boundaries(errors_only=True)      # what `stallscan boundaries --errors-only` lists
    s.sweep(step=0.05)                  # the flat curve of `stallscan sweep --format json`
    s.recommendations()                 # its recommended thresholds (with the bootstrap interval)

The database file is only read: `open` copies its base tables (events, files, skipped, rejects) into an
in-memory database and lets go of the file, so `stallscan ingest` can write it meanwhile (call `open`
again to see the new rows). Every replay (labels, boundaries, stalls, sweep) runs on that copy; nothing is
written back. A missing or unreadable file raises the CLI's errors (stallscan.store.errors), hint included.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any, cast

import duckdb
import polars as pl

from stallscan.replay.boundaries import replay_boundaries
from stallscan.replay.boundaries_ref import GAP_THRESHOLD_S
from stallscan.replay.labels import label_events
from stallscan.replay.stall_rules import NARRATED_BOUND, RETRY_BOUND
from stallscan.replay.stalls import OUTCOME_ALIASES, OUTCOMES, list_stalls, replay_stalls
from stallscan.report.timeline import resolve_session
from stallscan.store import sql
from stallscan.store.db import connect
from stallscan.store.errors import DatabaseError, StallscanError
from stallscan.store.schema_check import BASE_TABLES
from stallscan.sweep.core import ALL_POLICIES, SweepResult, curve_rows, policy_name, run_sweep, thresholds_grid

ALL_ROWS = 2**31 - 1
Config = str | os.PathLike[str] | dict[str, Any] | None


def open(path: str | os.PathLike[str]) -> Stallscan:
    """Open a stallscan database read-only (a copy in memory); raises DatabaseError when there is none."""
    return Stallscan(path)


class Stallscan:
    """One database, read into memory. Each method replays what it needs and returns a polars DataFrame."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = str(path)
        if self.path == ":memory:":
            raise StallscanError("stallscan.open needs a database file", hint="ingest first: stallscan ingest PATH")
        connect(self.path, read_only=True).close()  # missing, locked, not stallscan's, stale schema: clear errors
        self.con = connect(":memory:")
        self.con.execute("ATTACH $p AS src (READ_ONLY)", {"p": self.path})
        try:
            stored = {
                r[0]
                for r in self.con.execute(
                    "SELECT table_name FROM duckdb_tables() WHERE database_name = 'src' AND schema_name = 'main'"
                ).fetchall()
            }
            if "events" not in stored:
                raise DatabaseError(
                    f"{self.path} holds no stallscan tables", hint=f"run `stallscan ingest PATH --db {self.path}` first"
                )
            for table in BASE_TABLES:
                if table in stored:
                    self.con.execute(f"INSERT INTO {table} SELECT * FROM src.main.{table}")
        except BaseException:
            self.con.execute("DETACH src")
            self.con.close()
            raise
        self.con.execute("DETACH src")

    def close(self) -> None:
        self.con.close()

    def __enter__(self) -> Stallscan:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"stallscan.open({self.path!r})"

    def events(
        self,
        session: str | None = None,
        source_format: str | None = None,
        role: str | None = None,
        limit: int | None = None,
    ) -> pl.DataFrame:
        """Rows of `events` in session order. `session` may be a unique prefix (as for `stallscan show`)."""
        sid = resolve_session(self.con, session) if session is not None else None
        params = {"session": sid, "source_format": source_format, "role": role, "lim": _limit(limit)}
        return _frame(sql.relation(self.con, "api/events", params))

    def stalls(
        self,
        outcome: str | Sequence[str] | None = None,
        session: str | None = None,
        kind: str | Sequence[str] | None = None,
        retry_bound: int = RETRY_BOUND,
        narrated_bound: int = NARRATED_BOUND,
        limit: int | None = None,
    ) -> pl.DataFrame:
        """Stalled rounds, worst first (the rows of `stallscan stalls --format json`). outcome: silent,
        exhausted, abandoned, recovered, answered (one or a list)."""
        wanted = [OUTCOME_ALIASES.get(o, o) for o in _listed(outcome)]
        for o in wanted:
            if o not in OUTCOMES:
                raise StallscanError(f"unknown outcome {o!r}", hint="one of: silent, " + ", ".join(OUTCOMES[1:]))
        if retry_bound < 0 or narrated_bound < 0:
            raise StallscanError("retry_bound and narrated_bound must be >= 0")
        replay_stalls(self.con, retry_bound=retry_bound, narrated_bound=narrated_bound)
        kinds = _listed(kind) or None
        rows = list_stalls(self.con, outcome=wanted or None, session=session, kind=kinds, limit=limit)
        if rows:
            return pl.DataFrame(rows, infer_schema_length=None)
        # no row: the same query with no room, for its columns and types
        empty = {"outcome": wanted or None, "session": session, "kind": kinds, "lim": 0}
        return _frame(sql.relation(self.con, "replay/stall_list", empty))

    def boundaries(
        self,
        threshold: float = GAP_THRESHOLD_S,
        session: str | None = None,
        errors_only: bool = False,
        all: bool = False,  # the CLI's --all
        limit: int | None = None,
        config: Config = None,
    ) -> pl.DataFrame:
        """The router's turn-boundary decision for each user turn beside who wrote it (`stallscan boundaries`)."""
        if limit is not None and limit < 0:
            raise StallscanError("limit must be >= 0")
        label_events(self.con, config)
        replay_boundaries(self.con, threshold, summary=False)
        params = {"session": session, "errors_only": errors_only, "all": all, "sessions": None, "limit": limit}
        return _frame(sql.relation(self.con, "report/boundaries_list", params))

    def sweep(
        self,
        step: float = 0.05,
        lo: float = 0.0,
        hi: float = 30.0,
        thresholds: Sequence[float] | None = None,
        cost_auto_as_human: float = 1.0,
        cost_human_as_auto: float = 1.0,
        by: str = "none",
        policy: str = "all",
    ) -> pl.DataFrame:
        """The threshold curve (threshold x policy x group x population: tp/fp/fn/tn, precision, recall,
        F1, cost), the `curve` of `stallscan sweep --format json`. Boundaries at 2 s are replayed first."""
        res = self._sweep(step, lo, hi, thresholds, cost_auto_as_human, cost_human_as_auto, by, policy, 0, 0)
        return pl.DataFrame(curve_rows(res), infer_schema_length=None)

    def recommendations(
        self,
        step: float = 0.05,
        lo: float = 0.0,
        hi: float = 30.0,
        thresholds: Sequence[float] | None = None,
        cost_auto_as_human: float = 1.0,
        cost_human_as_auto: float = 1.0,
        by: str = "none",
        policy: str = "all",
        bootstrap: int = 1000,
        seed: int = 0,
    ) -> pl.DataFrame:
        """The cheapest threshold per policy and group, its session-bootstrap interval and the figures at
        2.0 s (the `recommendations` of `stallscan sweep --format json`)."""
        res = self._sweep(step, lo, hi, thresholds, cost_auto_as_human, cost_human_as_auto, by, policy, bootstrap, seed)
        return pl.DataFrame([dict(v) for v in res.recommendation.values()], infer_schema_length=None)

    def sql(self, query: str) -> pl.DataFrame:
        """Any query over the tables (base tables, and derived ones once a method has replayed them)."""
        return _frame(self.con.sql(query))

    def _sweep(
        self,
        step: float,
        lo: float,
        hi: float,
        thresholds: Sequence[float] | None,
        a: float,
        b: float,
        by: str,
        policy: str,
        bootstrap: int,
        seed: int,
    ) -> SweepResult:
        if policy != "all" and policy_name(policy) not in ALL_POLICIES:
            raise StallscanError(f"unknown policy {policy!r}", hint="router (vgr), gap-only, a rule variant or all")
        label_events(self.con)
        replay_boundaries(self.con, summary=False)  # what `stallscan sweep` reads: the boundaries at the default 2 s
        grid = sorted(float(x) for x in thresholds) if thresholds is not None else thresholds_grid(lo, hi, step)
        policies = ALL_POLICIES if policy == "all" else (policy_name(policy),)  # as `stallscan sweep --policy all`
        return run_sweep(self.con, grid, a, b, by, policies, bootstrap, seed)


def _frame(rel: duckdb.DuckDBPyRelation) -> pl.DataFrame:
    """A query's result as a polars DataFrame (through arrow: column types kept, no row loop)."""
    return cast(pl.DataFrame, pl.from_arrow(rel.to_arrow_table()))


def _limit(limit: int | None) -> int:
    if limit is not None and limit < 0:
        raise StallscanError("limit must be >= 0")
    return ALL_ROWS if limit is None else limit


def _listed(v: str | Sequence[str] | None) -> list[str]:
    if v is None:
        return []
    return [v] if isinstance(v, str) else list(v)
