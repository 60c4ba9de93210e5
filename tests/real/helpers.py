"""Plain helpers for the real-transcript tests (import them from here, never from a conftest).

Everything *expected* in these tests is computed from the raw files with plain ``json`` (or copied from
PROVENANCE.md / hermes-session/NOTES.md); nothing is derived from the code under test.
"""

from __future__ import annotations

import json
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

from tests.helpers import real_files, real_root

__all__ = ["FORMAT_DIRS", "real_files", "real_root"]

# sub-directory of the real-data folder -> format name the ingest must assign
FORMAT_DIRS = {
    "claude-code": "claude_code",
    "codex": "codex",
    "hermes-session": "openai_chat",
}


# --------------------------------------------------------------------------------------------------
# raw-file helpers (plain Python, independent of stallscan)
# --------------------------------------------------------------------------------------------------
def count_records(path: Path) -> int:
    """Records in a JSONL file: newline count, +1 when the last line lacks its newline and is non-empty."""
    data = Path(path).read_bytes()
    n = data.count(b"\n")
    if data and not data.endswith(b"\n") and data.rsplit(b"\n", 1)[-1] != b"":
        n += 1
    return n


def read_jsonl(path: Path) -> list[tuple[int, dict | None]]:
    """[(1-based line number, parsed object or None for a blank line)] for every record."""
    out = []
    with open(path, "rb") as fh:
        for i, raw in enumerate(fh, 1):
            s = raw.strip()
            out.append((i, json.loads(s) if s else None))
    return out


def parse_ts(value: str | None) -> datetime | None:
    """ISO-8601 → aware UTC datetime; naive values are read as UTC (as the contract says)."""
    if value is None:
        return None
    dt = datetime.fromisoformat(value.replace("Z", "+00:00"))
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return dt.astimezone(UTC)


# The finish-reason vocabulary of queries/store/schema.sql (macro finish_norm), restated in Python.
_FINISH = {
    "stop": {"stop", "end_turn", "stop_sequence", "eos", "complete", "completed", "final_answer"},
    "tool_calls": {"tool_calls", "tool_use", "tool-calls", "function_call", "tool_call"},
    "length": {"length", "max_tokens", "max_output_tokens", "model_context_window_exceeded"},
    "content_filter": {"content_filter", "content-filter", "refusal", "safety", "recitation"},
    "error": {"error", "failed", "failure"},
    "cancelled": {"cancelled", "canceled", "aborted", "interrupted", "abort"},
}


def finish_norm(raw: str | None) -> str | None:
    if raw is None:
        return None
    for norm, values in _FINISH.items():
        if raw.lower() in values:
            return norm
    return None


def norm_text(s):
    """'' and NULL are treated alike for text (an event without visible text)."""
    return s if s not in ("", None) else None


def same_arguments(actual, expected) -> bool:
    """Tool-call arguments: the raw string, or JSON that decodes to the same value."""
    if actual == expected:
        return True
    try:
        a = json.loads(actual) if isinstance(actual, str) else actual
    except (TypeError, ValueError):
        return False
    e = expected
    if isinstance(expected, str):
        try:
            e = json.loads(expected)
        except ValueError:
            return False
    return a == e


# --------------------------------------------------------------------------------------------------
# database helpers
# --------------------------------------------------------------------------------------------------
def fetch(con, sql: str, params=None) -> list[dict]:
    cur = con.execute(sql, params or [])
    cols = [d[0] for d in cur.description]
    return [dict(zip(cols, row)) for row in cur.fetchall()]


def event_rows(con, path: Path) -> list[dict]:
    rows = fetch(con, "SELECT * FROM events WHERE file = ? ORDER BY line, part", [str(path)])
    for r in rows:
        r["meta"] = json.loads(r["meta"]) if isinstance(r["meta"], str) else (r["meta"] or {})
    return rows


def file_row(con, path: Path) -> dict | None:
    rows = fetch(con, "SELECT * FROM files WHERE path = ?", [str(path)])
    return rows[0] if rows else None


def _skipped_columns(con) -> set[str]:
    return {r[0] for r in con.execute("DESCRIBE skipped").fetchall()}


def skipped_by_kind(con, path: Path) -> Counter:
    """Skipped records of a file counted by kind (works for one-row-per-line or (kind, n) layouts)."""
    if "n" in _skipped_columns(con):
        sql = "SELECT kind, sum(n) AS n FROM skipped WHERE file = ? GROUP BY kind"
    else:
        sql = "SELECT kind, count(*) AS n FROM skipped WHERE file = ? GROUP BY kind"
    return +Counter({r["kind"]: int(r["n"]) for r in fetch(con, sql, [str(path)])})


def skipped_lines(con, path: Path) -> dict[int, str] | None:
    """{line: kind} of the skipped records, or None when the skipped table has no line column."""
    if "line" not in _skipped_columns(con):
        return None
    rows = fetch(con, "SELECT line, kind FROM skipped WHERE file = ? ORDER BY line", [str(path)])
    out = {}
    for r in rows:
        assert r["line"] not in out, f"{path}: line {r['line']} skipped twice"
        out[r["line"]] = r["kind"]
    return out


def events_checksum(con, files: list[str] | None = None) -> tuple[int, str]:
    """(row count, md5 over every column of every event row in a fixed order)."""
    where, params = "", []
    if files is not None:
        where = "WHERE e.file IN (SELECT unnest(?))"
        params = [files]
    row = con.execute(
        f"SELECT count(*), md5(coalesce(string_agg(md5(CAST(e AS VARCHAR)), '|' "
        f"ORDER BY e.file, e.line, e.part, e.event_id), '')) FROM events e {where}",
        params,
    ).fetchone()
    return row[0], row[1]


def side_tables(con, files: list[str]) -> dict:
    """files/skipped/rejects rows for the given files, without the wall-clock column ingested_at."""
    out = {}
    out["files"] = fetch(
        con,
        "SELECT * EXCLUDE (ingested_at) FROM files WHERE path IN (SELECT unnest(?)) ORDER BY path",
        [files],
    )
    out["skipped"] = fetch(con, "SELECT * FROM skipped WHERE file IN (SELECT unnest(?)) ORDER BY ALL", [files])
    out["rejects"] = fetch(con, "SELECT * FROM rejects WHERE file IN (SELECT unnest(?)) ORDER BY file, line", [files])
    return out


def ingest_dirs(dirs: list[Path]):
    """Fresh in-memory DB with the given directories ingested (fmt='auto')."""
    from stallscan.ingest.run import ingest_paths
    from stallscan.store.db import connect

    con = connect(":memory:")
    result = ingest_paths(con, [str(d) for d in dirs], fmt="auto")
    return con, result


def compare_rows(actual: dict, expected: dict, where: str) -> list[str]:
    """Field-by-field comparison; an expected value may be a callable predicate or a set of allowed values."""
    problems = []
    for key, want in expected.items():
        got = actual.get(key)
        if callable(want):
            ok = want(got)
            desc = getattr(want, "desc", "predicate")
        elif isinstance(want, (set, frozenset)):
            ok = got in want
            desc = f"one of {sorted(map(repr, want))}"
        else:
            ok = got == want
            desc = repr(want)
        if not ok:
            problems.append(f"{where}: {key} = {got!r:.200}, expected {desc:.200}")
    return problems


def pred(fn, desc: str):
    fn.desc = desc
    return fn
