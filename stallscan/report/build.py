"""`stallscan report`: collect each section's data (plain dicts) and build renderables from it.

Sections register themselves in SECTIONS (stallscan.report.registry); each has `collect(con, opts) -> dict` (JSON-ready data,
stable keys) and `render(data) -> rich renderable`. Every section reads `scoped_events`, a temp view
of `events` narrowed by the shared filters (--since/--until/--harness/--model).
"""

from __future__ import annotations

from dataclasses import asdict
from datetime import datetime
from typing import Any

import duckdb

from stallscan.report import sections as _sections  # noqa: F401  (the built-in sections register on import)
from stallscan.report.registry import SECTIONS, ReportOptions, Section, register, sections
from stallscan.store import sql

__all__ = [
    "REPORT_VERSION",
    "SECTIONS",
    "ReportOptions",
    "Section",
    "build_report",
    "public",
    "register",
    "render_report",
    "scope",
]

REPORT_VERSION = 1


def scope(con: duckdb.DuckDBPyConnection, opts: ReportOptions) -> None:
    """(Re)create the temp view `scoped_events` for these filters."""
    sql.run(
        con,
        "report/scoped_events",
        {
            "since": opts.since,
            "until": opts.until,
            "harness": opts.harness or None,
            "model": opts.model or None,
        },
    )


def build_report(con: duckdb.DuckDBPyConnection, opts: ReportOptions) -> dict[str, Any]:
    scope(con, opts)
    out = {"report_version": REPORT_VERSION, "options": _jsonable(asdict(opts))}
    for s in sections():
        out[s.name] = s.collect(con, opts)
    return out


def public(data: dict[str, Any]) -> dict[str, Any]:
    """The report data without private (underscore) keys: what --format json prints."""
    if isinstance(data, dict):
        return {k: public(v) for k, v in data.items() if not str(k).startswith("_")}
    if isinstance(data, list):
        return [public(v) for v in data]
    return data


def render_report(data: dict[str, Any]) -> list[Any]:
    return [s.render(data[s.name]) for s in sections() if s.name in data]


def _jsonable(d: dict[str, Any]) -> dict[str, Any]:
    return {k: (v.isoformat() if isinstance(v, datetime) else v) for k, v in d.items()}
