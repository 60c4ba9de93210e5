"""Ingest: discover files, detect their format, read them in bulk and parse them into events inside DuckDB."""

from __future__ import annotations

import importlib
from typing import Any

# public name -> the module that defines it; loaded on first use, so importing one submodule stays cheap
_EXPORTS = {
    "ingest_paths": "stallscan.ingest.run",
    "IngestResult": "stallscan.ingest.result",
    "detect_format": "stallscan.ingest.detect",
    "FORMATS": "stallscan.ingest.detect",
    "discover": "stallscan.ingest.discover",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
