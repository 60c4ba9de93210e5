"""stallscan: replay AI-agent transcripts through stall and turn-boundary logic.

Notebook use: `s = stallscan.open("stallscan.duckdb")` (see stallscan.api); loaded on first use, so
`import stallscan` does not pay for polars. The command line is stallscan.cli (the `stallscan` script).
"""

from __future__ import annotations

from stallscan.store.version import SCHEMA_VERSION, __version__

_EXPORTS = {"open": "stallscan.api", "Stallscan": "stallscan.api"}

__all__ = ["SCHEMA_VERSION", "Stallscan", "__version__", "open"]

TYPE_CHECKING = False  # (no typing import: the console script's --version loads this package, stallscan.entry)
if TYPE_CHECKING:
    from typing import Any


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
