"""Shared fixtures, a pinned environment, and the test tiers (plain helpers are in tests/helpers.py).

Tiers, set from the folder a test module sits in (an explicit `@pytest.mark.slow` wins):
  tests/unit/        unit        in-process and fast (the whole tier runs in well under a minute)
  tests/slow/        slow        long loops (crash series, fuzzing); only with `-m slow`
  anything else      functional  CLI subprocesses, real transcripts, chromium, Spark; also any test module
                                 placed directly under tests/ (so a new one still runs in CI)
`pytest` (and .ci/run) runs unit + functional: pyproject's addopts deselect `slow`.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

from stallscan.store.db import connect
from tests.child_bytecode import share_bytecode
from tests.helpers import FIRST_MODULES, built_once, real_root

os.environ.setdefault("TZ", "UTC")
os.environ["NO_COLOR"] = "1"
os.environ["COLUMNS"] = "120"
share_bytecode()  # the child processes compile each module once per run, not once each

TESTS = Path(__file__).resolve().parent
TIER_FOLDERS = {"unit": "unit", "slow": "slow"}  # first folder below tests/ -> tier; the rest: functional


def tier_of(path: Path) -> str:
    parts = path.resolve().relative_to(TESTS).parts
    return TIER_FOLDERS.get(parts[0], "functional") if len(parts) > 1 else "functional"


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.get_closest_marker("slow") is None:
            item.add_marker(tier_of(Path(str(item.path))))
    rank = {TESTS / name: i for i, name in enumerate(FIRST_MODULES)}
    items.sort(
        key=lambda item: rank.get(Path(str(item.path)).resolve(), len(FIRST_MODULES))
    )  # (stable: the rest as collected)


@pytest.fixture(scope="session")
def sample_db_file(tmp_path_factory: pytest.TempPathFactory, sample_ingested_file: Path) -> Path:
    """sample_logs/ ingested and fully replayed once per run (tests.helpers.built_once: one xdist worker builds
    it, the others read the same file), closed: a copy of sample_ingested_file (the same ingest, not read
    again) replayed. Tests copy it (shutil.copy) and open the copy; nobody writes this file."""
    from tests.replay_checks import replay_all

    def build(path: Path) -> None:
        shutil.copy(sample_ingested_file, path)
        c = connect(str(path))
        replay_all(c)
        c.close()

    return built_once(tmp_path_factory, "sample_db", build)


@pytest.fixture(scope="session")
def sample_ingested_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """sample_logs/ ingested as `stallscan ingest sample_logs --db FILE` does (ingest_paths on a new file, no
    replay), once per run (built_once: shared by the xdist workers), closed. Tests whose subject is not the
    ingest copy it (shutil.copy) instead of ingesting sample_logs again; nobody writes this file."""
    from stallscan.ingest.run import ingest_paths
    from tests.helpers import SAMPLES

    def build(path: Path) -> None:
        c = connect(str(path))
        ingest_paths(c, [str(SAMPLES)])
        c.close()

    return built_once(tmp_path_factory, "sample_ingested", build)


@pytest.fixture
def con() -> Iterator[duckdb.DuckDBPyConnection]:
    c = connect(":memory:")
    yield c
    c.close()


@pytest.fixture(scope="session")
def real_ingested_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every real transcript (real_root(), the whole folder) ingested as `stallscan ingest REAL --db FILE` does
    (ingest_paths on a new file, no replay), once per run (tests.helpers.built_once: shared by the xdist
    workers), closed; skips when the real files are absent. Tests whose subject is not the ingest copy it
    (shutil.copy, memory_copy); nobody writes this file. (tests/functional/ and tests/real/ read it.)"""
    from stallscan.ingest.run import ingest_paths

    root = real_root()
    if not root.is_dir():
        pytest.skip(f"real transcripts not found at {root}: set STALLSCAN_REAL_DATA")

    def build(path: Path) -> None:
        c = connect(str(path))
        ingest_paths(c, [str(root)])
        c.close()

    return built_once(tmp_path_factory, "real_ingested", build)
