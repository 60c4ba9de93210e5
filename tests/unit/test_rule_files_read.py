"""The rule libraries a report reads come through stallscan.store.toml_cache (their JSON copies): the same
documents tomllib parses (tests/functional/test_rule_files_import.py: a report's readers then load no tomllib)."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from stallscan.store import toml_cache

DATA = Path(__file__).resolve().parents[2] / "stallscan" / "data"


@pytest.mark.parametrize("name", sorted(p.name for p in DATA.glob("*.toml")))
def test_the_cached_copy_is_the_parsed_file(name, tmp_path, monkeypatch):
    monkeypatch.setenv("STALLSCAN_CACHE", str(tmp_path))
    with open(DATA / name, "rb") as fh:
        want = tomllib.load(fh)
    assert toml_cache.read(DATA / name) == want  # first read: parsed, its copy written
    assert list(tmp_path.glob(f"{name}-*.json"))
    assert toml_cache.read(DATA / name) == want  # second read: from the copy
