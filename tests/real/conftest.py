"""Shared fixtures for the real-transcript tests (plain helpers: tests/real/helpers.py).

The real files live outside the repo (``<repo>/../shared/data/real`` or ``$STALLSCAN_REAL_DATA``).
The ingest itself happens once per test session (fixture ``db``): the Claude Code, Codex and Hermes
session directories are handed to ``ingest_paths`` as directories, exactly as a user would.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.real.helpers import (
    FORMAT_DIRS,
    compare_rows,
    count_records,
    event_rows,
    events_checksum,
    fetch,
    file_row,
    finish_norm,
    ingest_dirs,
    norm_text,
    parse_ts,
    pred,
    read_jsonl,
    real_files,
    real_root,
    same_arguments,
    side_tables,
    skipped_by_kind,
    skipped_lines,
)


def _rel(p: Path) -> str:
    return str(p.relative_to(real_root()))


def pytest_generate_tests(metafunc):
    # one test per real file; an empty list (data absent) makes pytest report the test as skipped
    for fixture, sub in (("claude_path", "claude-code"), ("codex_path", "codex"), ("hermes_path", "hermes-session")):
        if fixture in metafunc.fixturenames:
            files = real_files(sub)
            metafunc.parametrize(fixture, files, ids=[_rel(p) for p in files])


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
