"""Shared fixtures for the real-transcript tests.

The real files live outside the repo (``<repo>/../shared/data/real`` or ``$STALLSCAN_REAL_DATA``).
Everything *expected* in these tests is computed from the raw files with plain ``json`` (or copied from
PROVENANCE.md / hermes-session/NOTES.md); nothing is derived from the code under test.

The ingest itself happens once per test session (fixture ``db``): the Claude Code, Codex and Hermes
session directories are handed to ``ingest_paths`` as directories, exactly as a user would.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace

import pytest

REPO = Path(__file__).resolve().parents[2]

# sub-directory of the real-data folder -> format name the ingest must assign
FORMAT_DIRS = {
    "claude-code": "claude_code",
    "codex": "codex",
    "hermes-session": "openai_chat",
}


# --------------------------------------------------------------------------------------------------
# locating the data
# --------------------------------------------------------------------------------------------------
def real_root() -> Path:
    env = os.environ.get("STALLSCAN_REAL_DATA")
    root = Path(env) if env else REPO.parent / "shared" / "data" / "real"
    return root.resolve()


def real_files(sub: str) -> list[Path]:
    """All *.jsonl files below ``<real>/<sub>`` (sorted); [] when the data is absent."""
    d = real_root() / sub
    if not d.is_dir():
        return []
    return sorted(p for p in d.rglob("*.jsonl") if p.is_file())


def _rel(p: Path) -> str:
    return str(p.relative_to(real_root()))


def pytest_generate_tests(metafunc):
    # one test per real file; an empty list (data absent) makes pytest report the test as skipped
    for fixture, sub in (("claude_path", "claude-code"), ("codex_path", "codex"), ("hermes_path", "hermes-session")):
        if fixture in metafunc.fixturenames:
            files = real_files(sub)
            metafunc.parametrize(fixture, files, ids=[_rel(p) for p in files])


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


# --------------------------------------------------------------------------------------------------
# fixtures
# --------------------------------------------------------------------------------------------------
@pytest.fixture(scope="session")
def real_dir() -> Path:
    root = real_root()
    if not all((root / sub).is_dir() for sub in FORMAT_DIRS):
        pytest.skip(f"real transcripts not found at {root}: set STALLSCAN_REAL_DATA")
    return root


@pytest.fixture(scope="session")
def db(real_dir):
    """All real Claude Code, Codex and Hermes-session files, ingested once into an in-memory DB."""
    dirs = [real_dir / sub for sub in FORMAT_DIRS]
    con, result = ingest_dirs(dirs)
    files = {sub: real_files(sub) for sub in FORMAT_DIRS}
    yield SimpleNamespace(con=con, result=result, dirs=dirs, files=files, root=real_dir)
    con.close()


@pytest.fixture(scope="session")
def h():
    """The helper functions above, for the test modules (importing conftest directly is fragile)."""
    return SimpleNamespace(
        count_records=count_records,
        read_jsonl=read_jsonl,
        parse_ts=parse_ts,
        finish_norm=finish_norm,
        norm_text=norm_text,
        same_arguments=same_arguments,
        fetch=fetch,
        event_rows=event_rows,
        file_row=file_row,
        skipped_by_kind=skipped_by_kind,
        skipped_lines=skipped_lines,
        events_checksum=events_checksum,
        side_tables=side_tables,
        ingest_dirs=ingest_dirs,
        compare_rows=compare_rows,
        pred=pred,
        real_files=real_files,
    )
