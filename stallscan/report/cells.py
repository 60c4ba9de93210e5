"""Cell text in the report's one style (integers with thousands separators, seconds with two decimals,
rates with one, "–" for nothing): what the section block builders put in blocks. A leaf module."""

from __future__ import annotations

from typing import Any


def num(v: Any) -> str:
    if v is None:
        return "–"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, int):
        return f"{v:,}"
    if isinstance(v, float):
        if v.is_integer() and abs(v) < 1e15:
            return f"{int(v):,}"
        return f"{v:,.2f}"
    if isinstance(v, (list, tuple)):
        return ", ".join(num(x) for x in v)
    if isinstance(v, dict):
        return "; ".join(f"{k} {num(x)}" for k, x in v.items())
    return " ".join(str(v).split())


def secs(v: float | None) -> str:
    return "–" if v is None else f"{v:.2f}"


def pct(v: float | None) -> str:
    return "–" if v is None else f"{v:.0%}"


def anchor(sid: str) -> str:
    """The HTML id of a session's timeline."""
    return "s-" + "".join(c if c.isalnum() else "-" for c in sid)


def session_link(report: dict[str, Any], sid: str) -> str:
    """A session named by its short ref, linked to its timeline: `[ref](#s-...)`."""
    return f"[{(report.get('session_refs') or {}).get(sid, sid)}](#{anchor(sid)})"
