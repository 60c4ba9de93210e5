"""`stallscan report`: collect each section's data (plain dicts) and build renderables from it.

Sections register themselves in SECTIONS; each has `collect(con, opts) -> dict` (JSON-ready data,
stable keys) and `render(data) -> rich renderable`. Every section reads `scoped_events`, a temp view
of `events` narrowed by the shared filters (--since/--until/--harness/--model).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any, Callable

import duckdb

from . import sql

REPORT_VERSION = 1


@dataclass
class ReportOptions:
    threshold: float = 2.0
    retry_bound: int = 3
    since: datetime | None = None
    until: datetime | None = None
    harness: list[str] = field(default_factory=list)
    model: list[str] = field(default_factory=list)
    limit: int = 20  # rows in "worst first" lists
    bootstrap: int = 1000  # session resamples for the threshold interval


@dataclass
class Section:
    name: str
    title: str
    collect: Callable[[duckdb.DuckDBPyConnection, ReportOptions], dict]
    render: Callable[[dict], Any]


SECTIONS: list[Section] = []


def register(section: Section) -> Section:
    SECTIONS[:] = [s for s in SECTIONS if s.name != section.name] + [section]
    return section


def scope(con: duckdb.DuckDBPyConnection, opts: ReportOptions) -> None:
    """(Re)create the temp view `scoped_events` for these filters."""
    sql.run(con, "scoped_events", {
        "since": opts.since, "until": opts.until,
        "harness": opts.harness or None, "model": opts.model or None,
    })


def build_report(con: duckdb.DuckDBPyConnection, opts: ReportOptions) -> dict:
    scope(con, opts)
    out = {"report_version": REPORT_VERSION, "options": _jsonable(asdict(opts))}
    for s in SECTIONS:
        out[s.name] = s.collect(con, opts)
    return out


def public(data: dict) -> dict:
    """The report data without private (underscore) keys: what --format json prints."""
    if isinstance(data, dict):
        return {k: public(v) for k, v in data.items() if not str(k).startswith("_")}
    if isinstance(data, list):
        return [public(v) for v in data]
    return data


def render_report(data: dict) -> list:
    return [s.render(data[s.name]) for s in SECTIONS if s.name in data]


def _jsonable(d: dict) -> dict:
    return {k: (v.isoformat() if isinstance(v, datetime) else v) for k, v in d.items()}


# built-in sections register on import
from . import corpus  # noqa: E402,F401
from . import boundaries_report  # noqa: E402,F401
from . import stalls_report  # noqa: E402,F401
from . import threshold_report  # noqa: E402,F401
