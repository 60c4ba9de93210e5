"""Fixtures shared by the functional modules (the suite's own: tests/conftest.py)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import built_once, real_root


@pytest.fixture(scope="session")
def real_ingested_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every real transcript (real_root(), the whole folder) ingested as `stallscan ingest REAL --db FILE` does
    (ingest_paths on a new file, no replay), once per run (tests.helpers.built_once: shared by the xdist
    workers), closed; skips when the real files are absent. Tests whose subject is not the ingest copy it (shutil.copy); nobody writes this file."""
    from stallscan.ingest.run import ingest_paths
    from stallscan.store.db import connect

    root = real_root()
    if not root.is_dir():
        pytest.skip(f"real transcripts not found at {root}: set STALLSCAN_REAL_DATA")

    def build(path: Path) -> None:
        c = connect(str(path))
        ingest_paths(c, [str(root)])
        c.close()

    return built_once(tmp_path_factory, "real_ingested", build)


@pytest.fixture
def sample_db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sample_db_file: Path) -> Iterator[Any]:
    """A connection to a fresh copy of sample_logs/ ingested and replayed (sample_db_file: built once per run),
    the test running from tmp_path with no stallscan.toml or STALLSCAN_CONFIG of the caller's."""
    from stallscan.store.db import connect

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("STALLSCAN_CONFIG", raising=False)
    shutil.copy(sample_db_file, tmp_path / "d.duckdb")
    con = connect(str(tmp_path / "d.duckdb"))
    yield con
    con.close()
