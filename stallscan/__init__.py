"""stallscan: replay AI-agent transcripts through stall and turn-boundary logic.

Notebook use: `s = stallscan.open("stallscan.duckdb")` (see stallscan.api); loaded on first use, so
`import stallscan` (and the CLI) does not pay for polars.
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"
SCHEMA_VERSION = 2  # bump when rows an older version wrote would be wrong now (see db.MIGRATIONS)

_EXPORTS = {"open": "stallscan.api", "Stallscan": "stallscan.api"}

__all__ = ["SCHEMA_VERSION", "Stallscan", "__version__", "open"]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
