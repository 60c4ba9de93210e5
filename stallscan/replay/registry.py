"""The derived tables, registered once: name, build function, upstream, outputs.

Each entry is a stamped group (stallscan.replay.derive, stallscan.store.stamps) or a table built on demand
(`stamped=False`). `build(con, inputs)` brings the entry up to date: with a stamp's inputs (the options the
tables were made with) or, given None, with the defaults. The replay's groups are registered here; a higher
stage registers its own when imported (stallscan.sweep.bins: sweep_bins; stallscan.sweep.core: sweep).
derive runs them, export and `refresh` read the table -> entry map, and nothing here is imported by the
modules it names (no import circle).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import duckdb

from stallscan.replay.boundaries import replay_boundaries
from stallscan.replay.boundaries_ref import GAP_THRESHOLD_S
from stallscan.replay.labels import label_events
from stallscan.replay.stalls import replay_stalls
from stallscan.store import sql, stamps


@dataclass(frozen=True)
class Derived:
    name: str  # the stamp's name (derive_stamps.name); for an unstamped entry, its table
    outputs: tuple[str, ...]  # the tables it writes
    upstream: tuple[str, ...]  # derived tables its build reads besides events
    build: Callable[[duckdb.DuckDBPyConnection, dict[str, Any] | None], object]
    stamped: bool = True
    export: bool = True  # listed by `stallscan export` (sweep_bins is an internal cache)


REGISTRY: dict[str, Derived] = {}


def register(entry: Derived) -> Derived:
    REGISTRY[entry.name] = entry
    return entry


def of_table(table: str) -> Derived | None:
    """The entry that writes `table`, or None (a base table, or an entry whose stage is not imported)."""
    return next((e for e in REGISTRY.values() if table in e.outputs), None)


def tables() -> list[str]:
    """Every derived table, in registration order."""
    return [t for e in REGISTRY.values() for t in e.outputs]


def refresh(con: duckdb.DuckDBPyConnection, table: str) -> bool:
    """Bring an existing derived table up to date with the events, with the options it was made with (its
    stamp's inputs). False when the table has no stamp (nothing to refresh it from)."""
    entry = of_table(table)
    if entry is None or not entry.stamped:
        return False
    st, ev, n = stamps.with_state(con, entry.name)  # (two statements: get, events_version and n_events took five)
    if st is None:
        return False
    if st["events_version"] != ev or st["n_events"] != n:
        entry.build(con, st["inputs"])
    return True


def ensure(con: duckdb.DuckDBPyConnection, table: str) -> None:
    """A derived table present and current: refreshed when it exists (stamped), built with the defaults
    when it does not."""
    entry = of_table(table)
    if entry is None:
        raise KeyError(table)
    if sql.has_table(con, table, schema=None, temporary=None):
        refresh(con, table)
    else:
        entry.build(con, None)


def _labels(con: duckdb.DuckDBPyConnection, inputs: dict[str, Any] | None) -> object:
    return label_events(con) if inputs is None else label_events(con, inputs.get("config") or {})


def _boundaries(con: duckdb.DuckDBPyConnection, inputs: dict[str, Any] | None) -> object:
    threshold = GAP_THRESHOLD_S if inputs is None else inputs["threshold"]
    return replay_boundaries(con, threshold, summary=False)  # (a refresh reads the tables, not the counts)


def _stalls(con: duckdb.DuckDBPyConnection, inputs: dict[str, Any] | None) -> object:
    if inputs is None:
        return replay_stalls(con)
    return replay_stalls(con, inputs["retry_bound"], inputs["narrated_bound"], segmentation=inputs["segmentation"])


register(Derived("user_labels", ("user_labels",), (), _labels))
register(Derived("turn_boundaries", ("turn_boundaries", "turn_boundary_variants"), ("user_labels",), _boundaries))
register(Derived("stalls", ("stalls", "turns", "rounds"), ("user_labels",), _stalls))
