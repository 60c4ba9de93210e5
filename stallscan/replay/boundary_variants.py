"""Rule variants of the router's turn-boundary order (production path: queries/replay/turn_boundaries_variants.sql).

`replay_variants(con)` (re)creates the view `turn_boundary_variants` over `turn_boundaries` (at its
threshold), one row per row of it: for each variant the step that decided, the decision and the error
(stored only for the rows a variant rule can change: table `turn_boundary_variants_marked`).

    marker-aware         a user message after an interrupt / abort / cancel marker, or one that starts a new
                         harness turn (Codex task_started), is a new human turn
    notification-aware   a record of a known automatic kind (notifications, compaction and idle continuations,
                         hook re-prompts) never opens a turn, whatever its gap
    marker+notification  both

The markers and the automatic kinds are data: stallscan/data/router_variants.toml (each entry cited).
A plain-Python statement of the same rules lives in stallscan/replay/boundary_variants_ref.py.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import duckdb

from stallscan.replay.labels import ensure_codes
from stallscan.store import sql, toml_cache
from stallscan.store.errors import StallscanError

RULES = Path(__file__).resolve().parents[1] / "data" / "router_variants.toml"
# policy name (sweep, report) -> column prefix in turn_boundary_variants
VARIANTS = {"marker-aware": "marker", "notification-aware": "notif", "marker+notification": "both"}
SINGLE = ("marker-aware", "notification-aware")  # one rule change each (the combination is two)
MATCHES = {"markers": ("kind", "rule", "reply_status"), "automatic": ("rule",)}


@cache
def rule_entries() -> tuple[dict[str, Any], ...]:
    """The variants' rules as rows (rule_set marker | automatic, id, match, value, harness, citation)."""
    data = toml_cache.read(RULES)  # (its JSON copy: no tomllib import, no parse, in a report)
    out = []
    for section, rule_set in (("markers", "marker"), ("automatic", "automatic")):
        for i, raw in enumerate(data.get(section, [])):
            where = f"{RULES.name} [[{section}]] entry {i + 1}"
            for key in ("id", "match", "value", "citation"):
                if key not in raw:
                    raise StallscanError(f"{where}: missing field {key!r}", hint="id, match, value, citation")
            if raw["match"] not in MATCHES[section]:
                raise StallscanError(
                    f"{where} ({raw['id']}): match {raw['match']!r}", hint="one of: " + ", ".join(MATCHES[section])
                )
            harness = raw.get("harness")
            out.append(
                {
                    "rule_set": rule_set,
                    "id": str(raw["id"]),
                    "match": raw["match"],
                    "value": str(raw["value"]),
                    "harness": None if harness is None else [str(h) for h in harness],
                    "citation": str(raw["citation"]),
                }
            )
    keys = [(e["rule_set"], e["match"], e["value"]) for e in out]
    twice = sorted({k[2] for k in keys if keys.count(k) > 1})
    if twice:
        raise StallscanError(
            f"{RULES.name}: values listed twice: {', '.join(twice)}",
            hint="one entry per value; list every harness in it",
        )
    ids = [e["id"] for e in out]
    dup = sorted({i for i in ids if ids.count(i) > 1})
    if dup:
        raise StallscanError(f"{RULES.name}: ids used twice: {', '.join(dup)}", hint="give every entry its own id")
    return tuple(out)


def load_rules(con: duckdb.DuckDBPyConnection) -> None:
    con.execute(
        "CREATE OR REPLACE TEMP TABLE router_variant_rules "
        "(rule_set VARCHAR, id VARCHAR, match VARCHAR, value VARCHAR, harness VARCHAR[])"
    )
    types = {"rule_set": "VARCHAR", "id": "VARCHAR", "match": "VARCHAR", "value": "VARCHAR", "harness": "VARCHAR[]"}
    sql.insert_rows(con, "router_variant_rules", types, list(rule_entries()))


def replay_variants(
    con: duckdb.DuckDBPyConnection, counts: bool = True, stored: bool = False, view: bool = True
) -> dict[str, dict[str, int]]:
    """(Re)create `turn_boundary_variants` from `turn_boundaries` (which must exist: replay_boundaries builds
    both); returns error counts per variant (counts=False: {}, no pass over the view). It is a view: the rows a
    variant rule can change (a marker seen, a known automatic record) are stored in table
    `turn_boundary_variants_marked`, the others are the router's rows of turn_boundaries (each variant decides
    them as the router does). stored: the table turn_boundaries_narrow is there (the replay's own call), so the
    marks read their four stored columns from it, not through the view turn_boundaries_by_seq, and the labels'
    codes are there too (a replay's schema, an incremental one's scratch included, has them: no catalog look-up).
    view=False (an incremental run's scratch schema, where nothing reads it): the marked rows only, not the view
    (nor the look-up for a stored table of its name); counts needs the view."""
    load_rules(con)
    if not stored:
        ensure_codes(con)  # (turn_boundaries_variants.sql reads the labels' codes)
    if view or counts:
        sql.drop_stored_table(con, "turn_boundary_variants")  # (a database written before the view)
    sql.run(con, "replay/turn_boundaries_variants_prev" if stored else "replay/turn_boundaries_variants_prev_view")
    sql.run(con, "replay/turn_boundaries_variants")
    if view or counts:
        sql.run(con, "replay/turn_boundaries_variants_view")
    return variant_errors(con) if counts else {}


def variant_errors(con: duckdb.DuckDBPyConnection) -> dict[str, dict[str, int]]:
    """Error counts per variant, in one pass over the view (GROUPING SETS: one set per variant's error column;
    three GROUP BY queries read the view, and so turn_boundaries' computed columns, three times)."""
    cols = list(VARIANTS.values())
    err = [f"{c}_error" for c in cols]
    rows = con.execute(
        f"SELECT {', '.join(err)}, GROUPING({', '.join(err)}) AS g, count(*) FROM turn_boundary_variants "
        f"GROUP BY GROUPING SETS ({', '.join(f'({e})' for e in err)}) ORDER BY ALL"
    ).fetchall()
    out: dict[str, dict[str, int]] = {}
    for i, name in enumerate(VARIANTS):
        bit = 1 << (len(cols) - 1 - i)  # GROUPING(): a set bit for each column not grouped in the row's set
        counts = [(r[i], r[-1]) for r in rows if r[-2] == (1 << len(cols)) - 1 - bit]
        out[name] = dict(sorted(counts, key=lambda kv: (kv[0] is None, kv[0] or "")))
    return out
