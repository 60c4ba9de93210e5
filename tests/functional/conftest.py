"""Fixtures shared by the functional modules (the suite's own: tests/conftest.py)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import built_once, real_root


def _fresh_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, src: Path) -> Iterator[Any]:
    """A connection to a fresh copy of `src`, the test running from tmp_path with no stallscan.toml or
    STALLSCAN_CONFIG of the caller's."""
    from stallscan.store.db import connect

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("STALLSCAN_CONFIG", raising=False)
    shutil.copy(src, tmp_path / "d.duckdb")
    con = connect(str(tmp_path / "d.duckdb"))
    yield con
    con.close()


@pytest.fixture
def sample_db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sample_db_file: Path) -> Iterator[Any]:
    """sample_logs/ ingested and replayed (sample_db_file: built once per run), a fresh copy (_fresh_copy)."""
    yield from _fresh_copy(tmp_path, monkeypatch, sample_db_file)


@pytest.fixture
def sample_ingested_db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sample_ingested_file: Path) -> Iterator[Any]:
    """sample_logs/ ingested and not replayed (sample_ingested_file: built once per run), a fresh copy: for a test
    that runs a replay itself."""
    yield from _fresh_copy(tmp_path, monkeypatch, sample_ingested_file)


# --- ci-funcb7: the report of the real files, built once per run (test_browser.py, test_page_layout.py) ---


@pytest.fixture(scope="session")
def reported_file(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Path:
    """The real files' ingest (real_ingested_file; sample_ingested_file when the real files are absent) after
    `stallscan report --db FILE --bootstrap 200` ran on it: replayed, the report's cells stored. Once per run
    (built_once), closed. A test that renders that report copies the file and runs the report again, which
    reads the stored cells instead of computing them; nobody writes this file."""
    from typer.testing import CliRunner

    from stallscan.cli import app

    real = real_root().is_dir()
    ingested: Path = request.getfixturevalue("real_ingested_file" if real else "sample_ingested_file")

    def build(path: Path) -> None:
        shutil.copy(ingested, path)
        r = CliRunner().invoke(app, ["report", "--db", str(path), "--bootstrap", "200", "--format", "json"])
        assert r.exit_code == 0, (r.output, r.exception)

    return built_once(tmp_path_factory, "real_reported" if real else "sample_reported", build)
