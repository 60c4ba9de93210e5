"""Storage: the DuckDB connection and schema, the SQL loader, redaction and the errors users can cause."""

from __future__ import annotations

import importlib

# public name -> the module that defines it; loaded on first use, so importing one submodule stays cheap
_EXPORTS = {
    "connect": "stallscan.store.db",
    "default_db_path": "stallscan.store.db",
    "StallscanError": "stallscan.store.errors",
    "InputError": "stallscan.store.errors",
    "DatabaseError": "stallscan.store.errors",
    "DatabaseLocked": "stallscan.store.errors",
    "SchemaError": "stallscan.store.errors",
    "redact_sql": "stallscan.store.redact",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> object:  # (no typing import: the guard loads this package)
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
