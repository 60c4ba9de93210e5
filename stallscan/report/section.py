"""What a report section is (`Section`) and the report's options (`ReportOptions`): imported by the
sections, the registry and build; it imports only the block types."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import duckdb

from stallscan.replay.boundaries_ref import GAP_THRESHOLD_S
from stallscan.replay.stall_rules import RETRY_BOUND
from stallscan.report.blocks import Block

REPORT_VERSION = 1  # the report data's layout (raise it when a key changes meaning; the memo keys on it)


@dataclass
class ReportOptions:
    threshold: float = GAP_THRESHOLD_S
    retry_bound: int = RETRY_BOUND
    since: datetime | None = None
    until: datetime | None = None
    harness: list[str] = field(default_factory=list)
    model: list[str] = field(default_factory=list)
    limit: int | None = 20  # rows in "worst first" lists (None: all)
    bootstrap: int = 1000  # session resamples for the threshold interval
    timelines: bool = False  # also collect the listed sessions' timelines (the HTML links to them)
    show_args: str = ""  # appended to the `stallscan show` commands printed (e.g. " --db x.duckdb")
    # the derived tables (user_labels, turn_boundaries, rounds, stalls, turns, stall_replay_info) are given,
    # e.g. loaded from a Spark replay's parquet (report --from-parquet): sections read them, rebuild nothing
    _replayed: bool = False  # underscore: private, so public() keeps it out of --format json
    # --config: the labels' config file (None: $STALLSCAN_CONFIG, else ./stallscan.toml); the memo keys on
    # its content (stallscan.replay.labels.label_inputs), not on this path
    _config: str | None = None


# blocks(section data, the whole report data, full) -> the section's blocks: the full form (--full,
# --section, markdown, HTML) or the short one the default terminal report shows ([]: left out there)
BlockBuilder = Callable[[dict[str, Any], dict[str, Any], bool], list[Block]]
Collect = Callable[[duckdb.DuckDBPyConnection, ReportOptions], dict[str, Any]]
# a section's second part (Parts.rest): its connection, the options and the first part's data
Rest = Callable[[duckdb.DuckDBPyConnection, ReportOptions, dict[str, Any]], dict[str, Any]]


@dataclass(frozen=True)
class Parts:
    """A section's collect in two parts, each on a connection of its own when the report's lanes have one free
    (stallscan.report.lanes): `first` (what must run first: its replay, and what other steps list from it),
    `rest` (reads what `first` wrote and committed; given first's data too), and `join(first's data, rest's data)`, the section's data
    as its collect returns it (the same keys in the same order)."""

    first: Collect
    rest: Rest
    join: Callable[[dict[str, Any], dict[str, Any]], dict[str, Any]]


@dataclass
class Section:
    """A report section: its name (the data key), its title (said here only), how it collects its data and
    how it lays that data out as blocks (None: the generic layout, stallscan.report.generic)."""

    name: str
    title: str
    collect: Collect
    blocks: BlockBuilder | None = None
    parts: Parts | None = None  # (the lanes' split of collect; None: collect is one step)
