"""Shared fixtures and a pinned environment (plain helpers are in tests/helpers.py)."""

from __future__ import annotations

import os
from collections.abc import Iterator

import duckdb
import pytest

from stallscan.store.db import connect

os.environ.setdefault("TZ", "UTC")
os.environ["NO_COLOR"] = "1"
os.environ["COLUMNS"] = "120"


@pytest.fixture
def con() -> Iterator[duckdb.DuckDBPyConnection]:
    c = connect(":memory:")
    yield c
    c.close()
