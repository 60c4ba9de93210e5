"""Mask secret shapes (API keys, tokens, passwords, private keys, credentials in URLs) inside DuckDB.

The patterns live in a versioned data file (stallscan/data/secrets.toml, RE2 syntax) and are applied with
`regexp_replace` in SQL — never row by row in Python:

    from stallscan.store.redact import redact_sql
    con.execute(f"SELECT {redact_sql('text')} FROM events")

`redact_sql(expr)` is a plain SQL expression (usable inside lambdas); `install(con)` also defines the macro
`redact(t)`. `leaks_sql(expr)` lists the secret-shaped substrings that are *not* already masked (a run of
X / * / • as left by a human, or a [REDACTED:…] mark) — what a leak check counts.
"""

from __future__ import annotations

import os
import re
from functools import cache
from typing import TYPE_CHECKING, NamedTuple

from stallscan.store import toml_cache

if TYPE_CHECKING:  # only for annotations: the live guard masks in Python (mask) and must not load duckdb
    import duckdb

DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data", "secrets.toml")
# a match that is already masked: a [REDACTED:…] mark, or a run of mask characters standing for the value
MASKED = r"REDACTED|X{6,}|x{6,}|\*{6,}|•{3,}|#{6,}"


class SecretPattern(NamedTuple):  # (not a dataclass: the guard imports this module and must start fast)
    name: str
    regex: str
    replace: str


@cache
def patterns() -> tuple[SecretPattern, ...]:
    doc = toml_cache.read(DATA)
    return tuple(
        SecretPattern(p["name"], p["regex"], p.get("replace", f"[REDACTED:{p['name']}]")) for p in doc["pattern"]
    )


@cache
def version() -> int:
    return int(toml_cache.read(DATA)["version"])


@cache
def _compiled() -> tuple[tuple[re.Pattern[str], str], ...]:
    return tuple((re.compile(p.regex), p.replace) for p in patterns())


def mask(text: str) -> str:
    """`text` with every secret shape masked, in plain Python (the guard log's excerpts; the same patterns
    and replacements as redact_sql, which tests/functional/test_guard_log.py holds to the SQL result)."""
    for rx, repl in _compiled():
        text = rx.sub(repl, text)
    return text


def _lit(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


def redact_sql(expr: str) -> str:
    """A SQL expression: `expr` (VARCHAR) with every secret shape replaced by a [REDACTED:<kind>] mark."""
    out = expr
    for p in patterns():
        out = f"regexp_replace({out}, {_lit(p.regex)}, {_lit(p.replace)}, 'g')"
    return out


def leaks_sql(expr: str) -> str:
    """A SQL expression: the list of secret-shaped substrings of `expr` not already masked (kind:match)."""
    parts = [
        f"list_transform(regexp_extract_all({expr}, {_lit(p.regex)}), lambda m: {_lit(p.name + ':')} || m)"
        for p in patterns()
    ]
    return f"list_filter(flatten([{', '.join(parts)}]), lambda m: NOT regexp_matches(m, {_lit(MASKED)}))"


def install(con: duckdb.DuckDBPyConnection) -> None:
    """Define the macros redact(t) and secret_leaks(t) on a connection (temporary: nothing stored)."""
    con.execute(f"CREATE OR REPLACE TEMP MACRO redact(t) AS {redact_sql('t')}")
    con.execute(f"CREATE OR REPLACE TEMP MACRO secret_leaks(t) AS {leaks_sql('t')}")


def count_leaks(con: duckdb.DuckDBPyConnection, relation: str, column: str) -> dict[str, int]:
    """Unmasked secret shapes in `column` of a table / subquery, by kind (the values themselves stay put)."""
    rows = con.execute(
        f"SELECT split_part(m, ':', 1) AS kind, count(*) FROM "
        f"(SELECT unnest({leaks_sql(column)}) AS m FROM {relation}) GROUP BY ALL"
    ).fetchall()
    return dict(rows)
