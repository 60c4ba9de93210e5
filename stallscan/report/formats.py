"""Report as Markdown or as one self-contained HTML file (inline SVG charts, no network fetches).

Both are built from the same data dict `--format json` prints, section by section: scalars become a
definition list, lists of records become tables, nested mappings become sub-sections.
"""

from __future__ import annotations

import html
import math
from collections.abc import Callable
from typing import Any

TITLES = {"corpus": "Corpus", "stalls": "Stalls", "boundaries": "Turn boundaries", "threshold": "Threshold"}


def _fmt(v: Any) -> str:
    if v is None:
        return "–"
    if isinstance(v, float):
        return f"{v:.4g}" if abs(v) < 1e5 else f"{v:,.0f}"
    if isinstance(v, int) and not isinstance(v, bool):
        return f"{v:,}"
    if isinstance(v, (list, tuple)) and all(not isinstance(x, (dict, list)) for x in v):
        return ", ".join(_fmt(x) for x in v)
    return str(v).replace("\n", " ")


def _is_records(v: Any) -> bool:
    return bool(isinstance(v, list) and v and all(isinstance(x, dict) for x in v))


def _columns(records: list[dict[str, Any]]) -> list[str]:
    cols: list[str] = []
    for r in records:
        cols += [
            k
            for k in r
            if (k not in cols and not isinstance(r[k], (dict, list)))
            or (k not in cols and isinstance(r[k], list) and not _is_records(r[k]))
        ]
    return cols


# ---------------------------------------------------------------- markdown
def to_markdown(data: dict[str, Any]) -> str:
    out = ["# stallscan report", ""]
    opts = data.get("options", {})
    out.append("Options: " + ", ".join(f"`{k}={_fmt(v)}`" for k, v in opts.items()) + "  ")
    out.append("")
    for key, title in TITLES.items():
        if key in data:
            out.append(f"## {title}")
            out.append("")
            _md(data[key], out, 3)
    return "\n".join(out).rstrip() + "\n"


def _md(v: Any, out: list[str], depth: int) -> None:
    if isinstance(v, dict):
        scalars = {
            k: x
            for k, x in v.items()
            if not isinstance(x, (dict, list))
            or (isinstance(x, list) and not _is_records(x) and not any(isinstance(y, (dict, list)) for y in x))
        }
        for k, x in scalars.items():
            out.append(f"- **{k}**: {_fmt(x)}")
        if scalars:
            out.append("")
        for k, x in v.items():
            if k in scalars:
                continue
            out.append(f"{'#' * min(depth, 6)} {k}")
            out.append("")
            _md(x, out, depth + 1)
    elif _is_records(v):
        cols = _columns(v)
        out.append("| " + " | ".join(cols) + " |")
        out.append("|" + "|".join("---" for _ in cols) + "|")
        for r in v:
            out.append("| " + " | ".join(_fmt(r.get(c)).replace("|", "\\|") for c in cols) + " |")
        out.append("")
    elif isinstance(v, list):
        for x in v:
            _md(x, out, depth)
    else:
        out.append(_fmt(v))
        out.append("")


# ---------------------------------------------------------------- html
CSS = """body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:1100px;color:#222}
table{border-collapse:collapse;margin:.5em 0 1.2em}td,th{border:1px solid #ccc;padding:2px 6px;text-align:left;
vertical-align:top;max-width:40em;overflow-wrap:anywhere}th{background:#f3f3f3}h2{border-bottom:2px solid #333}
dl{display:grid;grid-template-columns:max-content auto;gap:2px 12px}dt{font-weight:600}svg{background:#fafafa;
border:1px solid #ddd;margin:.5em 0}.note{color:#666}"""
COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"]


def to_html(data: dict[str, Any]) -> str:
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'><title>stallscan report</title>",
        f"<style>{CSS}</style></head><body><h1>stallscan report</h1>",
    ]
    opts = data.get("options", {})
    parts.append("<p class='note'>" + html.escape(", ".join(f"{k}={_fmt(v)}" for k, v in opts.items())) + "</p>")
    for key, title in TITLES.items():
        if key not in data:
            continue
        parts.append(f"<h2>{title}</h2>")
        parts.extend(_charts(key, data))
        parts.append(_html(data[key], 3))
    parts.append("</body></html>")
    return "\n".join(parts)


def _html(v: Any, depth: int) -> str:
    e = html.escape
    if isinstance(v, dict):
        scal = {
            k: x
            for k, x in v.items()
            if not isinstance(x, (dict, list))
            or (isinstance(x, list) and not _is_records(x) and not any(isinstance(y, (dict, list)) for y in x))
        }
        s = (
            "<dl>" + "".join(f"<dt>{e(str(k))}</dt><dd>{e(_fmt(x))}</dd>" for k, x in scal.items()) + "</dl>"
            if scal
            else ""
        )
        for k, x in v.items():
            if k not in scal:
                s += f"<h{min(depth, 6)}>{e(str(k))}</h{min(depth, 6)}>" + _html(x, depth + 1)
        return s
    if _is_records(v):
        cols = _columns(v)
        head = "".join(f"<th>{e(c)}</th>" for c in cols)
        body = "".join("<tr>" + "".join(f"<td>{e(_fmt(r.get(c)))}</td>" for c in cols) + "</tr>" for r in v)
        return f"<table><tr>{head}</tr>{body}</table>"
    if isinstance(v, list):
        return "".join(_html(x, depth) for x in v)
    return f"<p>{e(_fmt(v))}</p>"


def _charts(key: str, data: dict[str, Any]) -> list[str]:
    if key == "boundaries":
        hist = data[key].get("gap_histogram") or {}
        series: dict[str, list[Any]] = {
            origin: [(b["lo"], b["hi"], b["n"]) for b in bins] for origin, bins in hist.items()
        }
        if series:
            return [_histogram_svg(series, data.get("options", {}).get("threshold", 2.0))]
    if key == "threshold":
        curves = [c for c in data[key].get("curves", []) if c["group"] == "all"]
        recs = {(r["policy"], r["group"]): r["threshold"] for r in data[key].get("recommendations", [])}
        if curves:
            return [_cost_svg(curves, recs)]
    if key == "stalls":
        series = {}
        for harness, rec in (data[key].get("recovery") or {}).items():
            pts = [
                (float(p["nudges"]), float(p["cumulative_share"]))
                for p in (rec or {}).get("curve", [])
                if isinstance(p, dict) and p.get("cumulative_share") is not None
            ]
            if pts:
                series[harness] = pts
        if series:
            return [_line_svg(series, "nudges sent", "share of recoverable stalls recovered", ymax=1.0)]
    return []


def _histogram_svg(series: dict[str, Any], threshold: float, w: int = 720, h: int = 260) -> str:
    """Gap histograms per origin on a log-seconds axis (counts as lines over bin centres)."""
    pad = 40
    pts_all = [(lo, hi, n) for s in series.values() for lo, hi, n in s if lo is not None and hi is not None and hi > 0]
    if not pts_all:
        return ""
    xmin = math.log10(max(min(max(lo, 1e-3) for lo, _, _ in pts_all), 1e-3))
    xmax = math.log10(max(hi for _, hi, _ in pts_all))
    ymax = max(n for _, _, n in pts_all) or 1
    sx: Callable[[float], float] = lambda x: (
        pad + (math.log10(max(x, 1e-3)) - xmin) / max(xmax - xmin, 1e-9) * (w - 2 * pad)
    )
    sy: Callable[[float], float] = lambda y: h - pad - y / ymax * (h - 2 * pad)
    out = [
        f"<svg xmlns='http://www.w3.org/2000/svg' width='{w}' height='{h}' role='img'>",
        f"<text x='{pad}' y='16' font-size='13'>gap from the end of the previous reply to the user message "
        f"(log seconds), per origin</text>",
    ]
    for dec in range(math.floor(xmin), math.ceil(xmax) + 1):
        x = sx(10**dec)
        if pad <= x <= w - pad:
            out.append(
                f"<line x1='{x:.1f}' y1='{pad}' x2='{x:.1f}' y2='{h - pad}' stroke='#ddd'/>"
                f"<text x='{x:.1f}' y='{h - pad + 14}' font-size='11' text-anchor='middle'>{10**dec:g}s</text>"
            )
    xt = sx(threshold)
    out.append(
        f"<line x1='{xt:.1f}' y1='{pad}' x2='{xt:.1f}' y2='{h - pad}' stroke='#000' stroke-dasharray='4 3'/>"
        f"<text x='{xt + 3:.1f}' y='{pad + 10}' font-size='11'>{threshold:g}s</text>"
    )
    for i, (origin, bins) in enumerate(sorted(series.items())):
        c = COLORS[i % len(COLORS)]
        pts = " ".join(f"{sx(math.sqrt(max(lo, 1e-3) * hi)):.1f},{sy(n):.1f}" for lo, hi, n in bins if hi and hi > 0)
        out.append(
            f"<polyline fill='none' stroke='{c}' stroke-width='2' points='{pts}'/>"
            f"<text x='{w - pad - 150}' y='{pad + 14 * (i + 1)}' font-size='12' fill='{c}'>{html.escape(str(origin))}</text>"
        )
    out.append("</svg>")
    return "".join(out)


def _cost_svg(curves: list[dict[str, Any]], recs: dict[tuple[str, str], Any], w: int = 720, h: int = 260) -> str:
    series = {c["policy"]: [(p["threshold"], p["cost"]) for p in c["points"]] for c in curves}
    marks = {f"best {p}": recs.get((p, "all")) for p in series}
    marks["2.0 s"] = 2.0
    return _line_svg(series, "threshold (s)", "cost", marks=marks, w=w, h=h)


def _line_svg(
    series: dict[str, Any],
    xlabel: str,
    ylabel: str,
    marks: dict[str, Any] | None = None,
    ymax: float | None = None,
    w: int = 720,
    h: int = 260,
) -> str:
    pad = 40
    xs = [x for pts in series.values() for x, _ in pts]
    ys = [y for pts in series.values() for _, y in pts]
    if not xs:
        return ""
    x0, x1 = min(xs), max(xs) if max(xs) > min(xs) else min(xs) + 1
    y1 = ymax if ymax is not None else (max(ys) or 1)
    sx: Callable[[float], float] = lambda x: pad + (x - x0) / (x1 - x0) * (w - 2 * pad)
    sy: Callable[[float], float] = lambda y: h - pad - y / y1 * (h - 2 * pad)
    out = [
        f"<svg xmlns='http://www.w3.org/2000/svg' width='{w}' height='{h}' role='img'>",
        f"<text x='{pad}' y='16' font-size='13'>{html.escape(ylabel)} by {html.escape(xlabel)}</text>",
        f"<line x1='{pad}' y1='{h - pad}' x2='{w - pad}' y2='{h - pad}' stroke='#999'/>",
        f"<text x='{pad}' y='{h - pad + 14}' font-size='11'>{x0:g}</text>"
        f"<text x='{w - pad}' y='{h - pad + 14}' font-size='11' text-anchor='end'>{x1:g}</text>"
        f"<text x='4' y='{pad}' font-size='11'>{y1:g}</text>",
    ]
    for name, x in (marks or {}).items():
        if x is not None and x0 <= x <= x1:
            out.append(
                f"<line x1='{sx(x):.1f}' y1='{pad}' x2='{sx(x):.1f}' y2='{h - pad}' stroke='#000' "
                f"stroke-dasharray='4 3'/><text x='{sx(x) + 3:.1f}' y='{pad + 10}' font-size='11'>"
                f"{html.escape(name)} = {x:g}</text>"
            )
    for i, (name, pts) in enumerate(series.items()):
        c = COLORS[i % len(COLORS)]
        p = " ".join(f"{sx(x):.1f},{sy(y):.1f}" for x, y in pts)
        out.append(
            f"<polyline fill='none' stroke='{c}' stroke-width='2' points='{p}'/>"
            f"<text x='{w - pad - 160}' y='{pad + 28 + 14 * i}' font-size='12' fill='{c}'>{html.escape(name)}</text>"
        )
    out.append("</svg>")
    return "".join(out)
