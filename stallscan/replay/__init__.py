"""Replay: origin labels, the router's turn boundaries and the stall walk, each beside its plain-Python reference."""

from __future__ import annotations

import importlib

# public name -> the module that defines it; loaded on first use, so importing one submodule stays cheap
_EXPORTS = {
    "label_events": "stallscan.replay.labels",
    "replay_boundaries": "stallscan.replay.boundaries",
    "replay_stalls": "stallscan.replay.stalls",
    "list_stalls": "stallscan.replay.stalls",
    "bound_sweep": "stallscan.replay.stalls",
    "silent_rates": "stallscan.replay.stalls",
    "recovery": "stallscan.replay.stalls",
    "ReplayInfo": "stallscan.replay.stalls",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> object:  # (no typing import: the guard loads this package)
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
