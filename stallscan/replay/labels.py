"""Origin labels (the truth): who wrote each user-role event, from the formats' own markers.

`label_events(con, config=None)` (re)creates the view `user_labels` from `events` (stored as codes: the table
`user_labels_narrow`, one INTEGER a label, the rules' code table `user_labels_rules`, and `user_labels_uncoded`, the
rare labels whose rule has no code; queries/replay/label_structural.sql has the codes' layout, user_labels_view.sql
decodes them):

    event_id        PK, an events row with role 'user' or 'tool'
    origin          human | automatic | tool_result
    origin_rule     the library entry (or structural rule) that decided it; 'override:<rule>' when the
                    user's labels file changed the origin
    human_content   an automatic envelope that carries a person's text or action (Cline
                    [TASK RESUMPTION] with new instructions, <feedback> inside a tool result, ...)
    starts_request  whether the record is itself a model request: local-command
                    records, command echoes, interrupt markers, queued copies are not

The automatic-prompt library is data (stallscan/data/prompts.toml, field reference at its top). A user's
`stallscan.toml` may add `[[prompts]]` entries (tried before the built-in ones) and name a labels
override file: `[labels] overrides = "labels.csv"` (CSV or parquet with columns event_id, origin).
Patterns are applied in SQL (queries/replay/user_labels.sql), never row by row in Python.
"""

from __future__ import annotations

import functools
import os
import weakref
from pathlib import Path
from typing import Any, cast

import duckdb

from stallscan.store import sql, stamps, toml_cache
from stallscan.store.errors import InputError, StallscanError

LIBRARY = Path(__file__).resolve().parents[1] / "data" / "prompts.toml"
ORIGINS = ("human", "automatic", "tool_result")
MATCH_KINDS = ("flag", "prefix", "exact", "contains", "regex")
DEFAULT_KINDS = ("message", "context", "queued_input")
# at most this many (event, regex entry) pairs per regex entry: the regex entries matched in one statement over the
# pairs, each pattern compiled per pair (queries/replay/user_labels_regex_rows.sql), else one UNION ALL copy per entry
ROW_MATCH_PER_ENTRY = 3
CONFIG_ENV = "STALLSCAN_CONFIG"
CONFIG_NAME = "stallscan.toml"
# origin_rule of the labels no library entry decides (queries/replay/user_labels_finish.sql): reserved as entry
# ids, so a label with either rule comes from the structural rule alone (turn_boundaries.sql relies on it)
STRUCTURAL_RULES = ("tool_result", "default_human")


def load_config(config: str | os.PathLike[str] | dict[str, Any] | None = None) -> dict[str, Any]:
    """The user's configuration: a dict as given, a TOML file, or ($STALLSCAN_CONFIG | ./stallscan.toml | {})."""
    if isinstance(config, dict):
        return dict(config)
    path = Path(config) if config is not None else None
    if path is None:
        env = os.environ.get(CONFIG_ENV)
        path = Path(env) if env else (Path(CONFIG_NAME) if Path(CONFIG_NAME).is_file() else None)
    if path is None:
        return {}
    import tomllib  # (only with a config file: the built-in libraries are read through stallscan.store.toml_cache)

    try:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except OSError as exc:
        raise InputError(
            f"cannot read config {path}: {exc.strerror or exc}", hint=f"check the path or unset {CONFIG_ENV}"
        )
    except tomllib.TOMLDecodeError as exc:
        raise StallscanError(
            f"config {path} is not valid TOML: {exc}", hint="see stallscan/data/prompts.toml for the entry format"
        )
    data.setdefault("_base", str(path.resolve().parent))
    return data


def library_entries(config: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """All prompt entries in the order they are tried: the user's first, then the built-in library."""
    builtin = _builtin(str(LIBRARY), *_stats(LIBRARY))
    user = (config or {}).get("prompts", [])
    out = []
    for source, entries in (("config", user), ("library", builtin)):
        for i, raw in enumerate(entries):
            out.append(_normalise(raw, f"{source} entry {i + 1}"))
    ids = [e["id"] for e in out]
    dup = sorted({i for i in ids if ids.count(i) > 1})
    if dup:
        raise StallscanError(f"prompt ids used twice: {', '.join(dup)}", hint="give every [[prompts]] entry its own id")
    taken = sorted(set(ids) & set(STRUCTURAL_RULES))
    if taken:
        raise StallscanError(
            f"prompt id {taken[0]!r} is reserved: it names a structural rule of the labels",
            hint="give the [[prompts]] entry another id",
        )
    for rank, e in enumerate(out):
        e["rank"] = rank
    return out


def _stats(path: Path) -> tuple[int, int]:
    st = path.stat()
    return st.st_mtime_ns, st.st_size


@functools.lru_cache(maxsize=4)
def _builtin(path: str, mtime_ns: int, size: int) -> list[dict[str, Any]]:
    """The library file's [[prompts]] tables, parsed once per content seen (a report asks 4 times: 6 CPU ms
    each); keyed by the file's stats, so an edited file is read again. _normalise copies what it keeps."""
    del mtime_ns, size  # (the cache's key only)
    return list(toml_cache.read(path).get("prompts", []))  # (its JSON copy: no tomllib import, no parse)


def _normalise(raw: Any, where: str) -> dict[str, Any]:
    if not isinstance(raw, dict):
        raise StallscanError(f"{where}: not a table", hint="write entries as [[prompts]] tables")
    for key in ("id", "harness", "match", "text"):
        if key not in raw:
            raise StallscanError(f"{where}: missing field {key!r}", hint="each entry needs id, harness, match, text")
    harness = raw["harness"]
    harness = [harness] if isinstance(harness, str) else list(harness)
    match = raw["match"]
    if match not in MATCH_KINDS:
        raise StallscanError(
            f"{where} ({raw['id']}): unknown match {match!r}", hint="one of: " + ", ".join(MATCH_KINDS)
        )
    origin = raw.get("origin", "automatic")
    if origin not in ORIGINS:
        raise StallscanError(f"{where} ({raw['id']}): unknown origin {origin!r}", hint="one of: " + ", ".join(ORIGINS))
    value = raw.get("value", True)
    return {
        "id": str(raw["id"]),
        "harness": [str(h) for h in harness],
        "match": match,
        "text": str(raw["text"]),
        "value": str(value).lower() if isinstance(value, bool) else str(value),
        "flag": raw.get("flag"),
        "kinds": list(raw.get("kinds", DEFAULT_KINDS)),
        "sidechain": raw.get("sidechain"),
        "first": raw.get("first"),
        "after": raw.get("after"),
        "origin": origin,
        "starts_request": bool(raw.get("starts_request", True)),
        "human_content": bool(raw.get("human_content", False)),
        "citation": raw.get("citation"),
    }


def _load_library(con: duckdb.DuckDBPyConnection, entries: list[dict[str, Any]], check: bool = True) -> None:
    cols = [
        "rank",
        "id",
        "harness",
        "match",
        "text",
        "value",
        "flag",
        "kinds",
        "sidechain",
        "first",
        "after",
        "origin",
        "starts_request",
        "human_content",
        "citation",
    ]
    types = {
        "rank": "INTEGER",
        "harness": "VARCHAR[]",
        "kinds": "VARCHAR[]",
        "sidechain": "BOOLEAN",
        "first": "BOOLEAN",
        "starts_request": "BOOLEAN",
        "human_content": "BOOLEAN",
    }
    con.execute(
        "CREATE OR REPLACE TEMP TABLE prompt_library ("
        + ", ".join(f'"{c}" {types.get(c, "VARCHAR")}' for c in cols)
        + ")"
    )
    # one INSERT of all entries (a Spark replay pays this once per task group)
    sql.insert_rows(con, "prompt_library", {c: types.get(c, "VARCHAR") for c in cols}, entries)
    # RE2 (DuckDB) is the regex dialect: check the patterns where they will run, all in one statement; when
    # one fails, each alone, to name it
    if not check:
        return
    patterns = [e["text"] for e in entries if e["match"] == "regex"]
    if patterns:
        try:
            con.execute("SELECT " + ", ".join("regexp_matches('', ?)" for _ in patterns), patterns).fetchall()
            return
        except duckdb.Error:
            pass
    for e in entries:
        if e["match"] == "regex":
            try:
                con.execute("SELECT regexp_matches('', ?)", [e["text"]]).fetchall()
            except duckdb.Error as exc:
                raise StallscanError(
                    f"prompt {e['id']}: bad regex {e['text']!r}: {str(exc).splitlines()[0]}",
                    hint="patterns use RE2 syntax",
                )


def _load_overrides(con: duckdb.DuckDBPyConnection, config: dict[str, Any]) -> int:
    path = (config.get("labels") or {}).get("overrides")
    con.execute("CREATE OR REPLACE TEMP TABLE label_overrides (event_id VARCHAR, origin VARCHAR)")
    if not path:
        return 0
    p = Path(path)
    if not p.is_absolute():
        p = Path(config.get("_base", ".")) / p
    if not p.is_file():
        raise InputError(
            f"labels override file not found: {p}", hint="[labels] overrides = path to a CSV or parquet file"
        )
    reader = (
        "read_parquet(?)"
        if p.suffix.lower() in (".parquet", ".pq")
        else "read_csv(?, header = true, all_varchar = true)"
    )
    try:
        con.execute(
            f"INSERT INTO label_overrides SELECT event_id::VARCHAR, lower(trim(origin::VARCHAR)) FROM {reader}",
            [str(p)],
        )
    except duckdb.Error as exc:
        raise StallscanError(
            f"cannot read labels file {p}: {str(exc).strip().splitlines()[0]}",
            hint="columns event_id, origin (human / automatic / tool_result)",
        )
    bad = con.execute(
        "SELECT any_value(origin), count(*) FROM label_overrides WHERE origin NOT IN ('human', 'automatic', 'tool_result') "
        "OR origin IS NULL OR event_id IS NULL"
    ).fetchall()[0]
    if bad[1]:
        raise StallscanError(
            f"labels file {p}: {bad[1]} row(s) with a bad origin or event_id (e.g. {bad[0]!r})",
            hint="origin is one of: human, automatic, tool_result",
        )
    return cast(int, con.execute("SELECT count(*) FROM label_overrides").fetchall()[0][0])


def label_events(
    con: duckdb.DuckDBPyConnection, config: str | os.PathLike[str] | dict[str, Any] | None = None
) -> dict[str, Any]:
    """Bring `user_labels` up to date with `events` (reused when neither the events nor the library,
    the config or the overrides file changed; only changed sessions relabelled after an ingest).
    Returns counts: {'origin': {...}, 'not_requests': n, 'overrides': n}."""
    from stallscan.replay import derive

    cfg = load_config(config)
    entries = library_entries(cfg)
    inputs = label_inputs(cfg)
    state: dict[str, int | None] = {"overrides": None}

    def compute(c: duckdb.DuckDBPyConnection) -> None:
        state["overrides"] = _compute(c, cfg, entries)

    seen: dict[str, Any] = {}
    # (stored: the codes, the rules' code table and the labels no code stands for; the view user_labels over them,
    # made by _compute)
    outputs = ("user_labels_narrow", "user_labels_rules", "user_labels_uncoded")
    mode = derive.run(con, "user_labels", inputs, compute, outputs, seen=seen)
    token = (seen["key"], seen["version"]) if seen["version"] is not None else None
    if token is None and mode != "reused":  # the tables just written: kept under the stamp this run wrote, which
        # the report's next calls find reused (a recount of every label: 5-6 CPU ms at 1M events, against 0.6);
        # its version as derive wrote it (`written`), else read back
        if seen.get("written") is not None:
            token = (seen["key"], seen["written"])
        else:
            st = stamps.get(con, "user_labels")
            token = (seen["key"], st["events_version"]) if st is not None and st["events_version"] is not None else None
    kept = _COUNTS.get(con)
    if token is not None and kept is not None and kept[0] == token:
        return _copy(kept[1])
    # (both counts in one pass over the codes: label_structural.sql has their layout)
    rows = con.execute(
        "SELECT code & 3, count(*), count(*) FILTER ((code & 8) <> 0) FROM user_labels_narrow GROUP BY ALL ORDER BY 1"
    ).fetchall()
    by_origin = {ORIGINS[o - 1]: n for o, n, _ in rows}
    not_req = sum(r[2] for r in rows)
    n_over = state["overrides"]
    if n_over is None:  # reused: the override file's row count, as a fresh run reports it
        n_over = _load_overrides(con, cfg)
    out = {"origin": by_origin, "not_requests": not_req, "overrides": n_over}
    if token is not None:
        _COUNTS[con] = (token, _copy(out))
    return out


# the counts label_events returned for reused labels, per connection, by (stamp key, events version): a
# report asks four times (its build, the replays, the boundaries section); the stamp, checked each time,
# says the table is the one counted (its key covers the override file's bytes). Weakly keyed.
_COUNTS: weakref.WeakKeyDictionary[duckdb.DuckDBPyConnection, tuple[tuple[str, int], dict[str, Any]]] = (
    weakref.WeakKeyDictionary()
)


def _copy(counts: dict[str, Any]) -> dict[str, Any]:
    return {**counts, "origin": dict(counts["origin"])}


def label_inputs(config: str | os.PathLike[str] | dict[str, Any] | None = None) -> dict[str, Any]:
    """What the labels depend on besides the events and the library: the config and the override file's
    content (the stamp's inputs; the report memo keys on them too)."""
    cfg = load_config(config)
    return {"config": cfg, "overrides": _overrides_fingerprint(cfg)}


def refresh_labels(con: duckdb.DuckDBPyConnection) -> None:
    """Bring an existing, stamped `user_labels` up to date with the events, with its own config."""
    st = stamps.get(con, "user_labels")
    if st is not None and st["events_version"] != stamps.events_version(con):
        label_events(con, st["inputs"].get("config") or {})


def _overrides_fingerprint(cfg: dict[str, Any]) -> str | None:
    """What the labels override file holds (sha256 of its bytes), so an edited file relabels."""
    import hashlib

    path = (cfg.get("labels") or {}).get("overrides")
    if not path:
        return None
    p = Path(path)
    if not p.is_absolute():
        p = Path(cfg.get("_base", ".")) / p
    try:
        return f"{p}:{hashlib.sha256(p.read_bytes()).hexdigest()}"
    except OSError:
        return f"{p}:unreadable"


def _compute(con: duckdb.DuckDBPyConnection, cfg: dict[str, Any], entries: list[dict[str, Any]]) -> int:
    """(Re)create `user_labels` from `events` (in the schema the search path names). Returns override rows."""
    from stallscan.replay import derive

    # (an incremental run's library is the one its stamp's full run checked: the stamp's key holds the config's
    # entries and the rules hash the built-in library, so its regexes are not compiled again: 2.7 CPU ms)
    _load_library(con, entries, check=not derive.in_scratch())
    n_over = _load_overrides(con, cfg)
    sql.run(con, "replay/user_labels")
    regex = sql.relation(con, "replay/user_labels_regex_entries").fetchall()
    if regex and regex[0][2] <= ROW_MATCH_PER_ENTRY * len(regex):
        sql.run(con, "replay/user_labels_regex_rows")
    else:
        sql.union_all(con, "ul_cand", "replay/user_labels_regex", [{"rank": r, "pattern": p} for r, p, _ in regex])
    sql.run(con, "replay/label_structural")
    sql.run(con, "replay/user_labels_finish", {"n_lib": len(entries)})
    if not derive.in_scratch():  # (an incremental run's scratch has no stored table of that name, and nothing in
        # the run reads the view: the database's own stays as the full run made it; 1.4 CPU ms, 2 statements)
        sql.drop_stored_table(con, "user_labels")  # (a database written before the view holds a table of its name)
        sql.run(con, "replay/user_labels_view")
    return n_over


def ensure_codes(con: duckdb.DuckDBPyConnection) -> None:
    """The labels' codes in the current schema (what the rule variants read): a database of parquet outputs
    (stallscan.export.connect_parquet) holds `user_labels` as a table of strings, encoded here (the view then
    replaces the table); a replay's schema, an incremental one's scratch schema included, has them already."""
    found = con.execute(
        "SELECT count(*) FROM duckdb_tables() WHERE database_name = current_database() "
        "AND schema_name = current_schema() AND table_name = 'user_labels_narrow'"
    ).fetchall()
    if not found[0][0]:
        sql.run(con, "replay/user_labels_encode")
        sql.run(con, "replay/user_labels_view")
