"""Sweep: score every gap threshold in one sorted pass, with a session-bootstrap interval."""

from __future__ import annotations

import importlib
from typing import Any

# public name -> the module that defines it; loaded on first use, so importing one submodule stays cheap
_EXPORTS = {
    "run_sweep": "stallscan.sweep.core",
    "sweep_table": "stallscan.sweep.core",
    "thresholds_grid": "stallscan.sweep.core",
    "curve_rows": "stallscan.sweep.core",
    "SweepResult": "stallscan.sweep.core",
    "POLICIES": "stallscan.sweep.core",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
