"""The report's section registry and shared options (imported by sections and by build; imports neither).

Each section has `collect(con, opts) -> dict` (JSON-ready data, stable keys) and `render(data) -> rich
renderable`. Sections register on import; `stallscan.report.sections` imports the built-in ones.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import duckdb


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
    timelines: bool = False  # also collect the listed sessions' timelines (the HTML links to them)
    show_args: str = ""  # appended to the `stallscan show` commands printed (e.g. " --db x.duckdb")
    # the derived tables (user_labels, turn_boundaries, rounds, stalls, turns, stall_replay_info) are given,
    # e.g. loaded from a Spark replay's parquet (report --from-parquet): sections read them, rebuild nothing
    _replayed: bool = False  # underscore: private, so public() keeps it out of --format json


@dataclass
class Section:
    name: str
    title: str
    collect: Callable[[duckdb.DuckDBPyConnection, ReportOptions], dict[str, Any]]
    render: Callable[[dict[str, Any]], Any]
    summary: Callable[[dict[str, Any]], Any] | None = None  # the short form the default terminal report shows


SECTIONS: list[Section] = []
ORDER = (
    "corpus",
    "boundaries",
    "stalls",
    "threshold",
    "guard",
)  # built-ins in report order; others follow as registered


def register(section: Section) -> Section:
    SECTIONS[:] = [s for s in SECTIONS if s.name != section.name] + [section]
    return section


def sections() -> list[Section]:
    """The registered sections in report order."""
    rank = {name: i for i, name in enumerate(ORDER)}
    return sorted(SECTIONS, key=lambda s: rank.get(s.name, len(ORDER)))
