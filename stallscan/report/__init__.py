"""Report: sections collect plain dicts; renderers turn them into terminal, markdown and HTML output."""

from __future__ import annotations

TYPE_CHECKING = False  # (typing is not imported: stallscan.report.mirror serves a repeat report without it)
if TYPE_CHECKING:
    from typing import Any

# public name -> the module that defines it; loaded on first use, so importing one submodule stays cheap
_EXPORTS = {
    "ReportOptions": "stallscan.report.registry",
    "build_report": "stallscan.report.build",
    "render_report": "stallscan.report.build",
    "public": "stallscan.report.build",
    "to_html": "stallscan.report.html",
    "to_markdown": "stallscan.report.markdown",
    "timeline": "stallscan.report.timeline",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
