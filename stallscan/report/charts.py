"""Inline SVG charts for the HTML report, drawn from the chart blocks (stallscan.report.blocks): real axes with ticks and titles, legends outside the plot (so
labels never overprint), series told apart by colour and by dash and marker shape; series with the
same points are drawn once and named together instead of hiding one under the other."""

from __future__ import annotations

import html
import math
from collections.abc import Callable
from typing import Any

from stallscan.report.blocks import BarChart, LineChart

COLORS = ["#1f5fbf", "#d9480f", "#2b8a3e", "#7048e8", "#c2255c", "#5c940d", "#0b7285", "#862e9c"]
DASHES = ["", "7 4", "2 3", "10 3 2 3", "4 2", "1 4"]
W, H = 720, 280
L, R, T, B = 56, 16, 16, 52  # plot margins: left (y ticks), right, top, bottom (x ticks + title)


def nice_ticks(lo: float, hi: float, n: int = 5) -> list[float]:
    """Round tick values covering [lo, hi] (steps of 1, 2 or 5 x 10^k)."""
    if hi <= lo:
        hi = lo + 1
    raw = (hi - lo) / n
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 5, 10) if m * mag >= raw)
    start = math.floor(lo / step) * step
    ticks = [round(start, 10)]
    while ticks[-1] < hi - step * 1e-9:
        ticks.append(round(ticks[-1] + step, 10))
    return ticks


def _fmt(v: float) -> str:
    return f"{v:,.0f}" if float(v).is_integer() else f"{v:g}"


def _frame(xlabel: str, ylabel: str, yticks: list[float], sy: Callable[[float], float], title: str) -> list[str]:
    e = html.escape
    out = [
        f"<svg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 {W} {H}' width='{W}' height='{H}' role='img' "
        f"aria-label='{e(title)}'>",
        f"<line x1='{L}' y1='{T}' x2='{L}' y2='{H - B}' stroke='#555'/>",
        f"<line x1='{L}' y1='{H - B}' x2='{W - R}' y2='{H - B}' stroke='#555'/>",
    ]
    for y in yticks:
        py = sy(y)
        out.append(
            f"<line x1='{L - 4}' y1='{py:.1f}' x2='{W - R}' y2='{py:.1f}' stroke='#e3e6ea'/>"
            f"<text x='{L - 7}' y='{py + 3.5:.1f}' text-anchor='end'>{_fmt(y)}</text>"
        )
    out.append(f"<text x='{(L + W - R) / 2:.0f}' y='{H - 8}' text-anchor='middle'>{e(xlabel)}</text>")
    out.append(
        f"<text transform='translate(14 {(T + H - B) / 2:.0f}) rotate(-90)' text-anchor='middle'>{e(ylabel)}</text>"
    )
    return out


def _legend(entries: list[tuple[str, str, str]]) -> str:
    return (
        "<div class='legend'>"
        + "".join(
            f"<span><i style='border-top-color:{c};border-top-style:{'dashed' if d else 'solid'}'></i>{html.escape(n)}</span>"
            for n, c, d in entries
        )
        + "</div>"
    )


def _figure(svg: list[str], legend: str, caption: str) -> str:
    return f"<figure>{''.join(svg)}</svg>{legend}<figcaption>{html.escape(caption)}</figcaption></figure>"


def _marker(i: int, x: float, y: float, c: str) -> str:
    shape = i % 3
    if shape == 0:
        return f"<circle cx='{x:.1f}' cy='{y:.1f}' r='3.5' fill='{c}'/>"
    if shape == 1:
        return f"<rect x='{x - 3.5:.1f}' y='{y - 3.5:.1f}' width='7' height='7' fill='{c}'/>"
    return f"<path d='M{x:.1f} {y - 4.5:.1f}L{x + 4.5:.1f} {y + 3.5:.1f}L{x - 4.5:.1f} {y + 3.5:.1f}Z' fill='{c}'/>"


def bar_chart(b: BarChart) -> str:
    """Grouped bars over the bins, one colour per series; the marked x value drawn as a dashed line."""
    if not b.series:
        return ""
    names = list(b.series)
    ymax = max((n for name in names for n in b.series[name]), default=1) or 1
    yt = nice_ticks(0, ymax, 5)
    top = yt[-1]

    def sy(y: float) -> float:
        return H - B - y / top * (H - B - T)

    bw = (W - L - R) / len(b.bins)
    svg = _frame(b.xlabel, b.ylabel, yt, sy, b.title)
    thr = b.mark
    for i, (lo, hi) in enumerate(b.bins):
        x0 = L + i * bw
        label = f"{lo:g}–{hi:g}" if hi is not None else f"≥ {lo:g}"
        svg.append(
            f"<line x1='{x0:.1f}' y1='{H - B}' x2='{x0:.1f}' y2='{H - B + 4}' stroke='#555'/>"
            f"<text x='{x0:.1f}' y='{H - B + 15}' text-anchor='middle' font-size='10'>{lo:g}</text>"
        )
        inner = bw * 0.8 / len(names)
        for j, o in enumerate(names):
            n = b.series[o][i]
            if n:
                x = x0 + bw * 0.1 + j * inner
                svg.append(
                    f"<rect x='{x:.1f}' y='{sy(n):.1f}' width='{inner - 1:.1f}' height='{H - B - sy(n):.1f}' "
                    f"fill='{COLORS[j % len(COLORS)]}'><title>{html.escape(o)} {label} s: {n}</title></rect>"
                )
        if thr is not None and lo <= thr and (hi is None or thr < hi):
            frac = 0 if hi is None else (thr - lo) / (hi - lo)
            xt = x0 + frac * bw
            svg.append(
                f"<line x1='{xt:.1f}' y1='{T}' x2='{xt:.1f}' y2='{H - B}' stroke='#000' stroke-dasharray='4 3'/>"
                f"<text x='{xt + 4:.1f}' y='{T + 10}'>threshold {_fmt(thr)} s</text>"
            )
    legend = _legend([(o, COLORS[j % len(COLORS)], "") for j, o in enumerate(names)])
    return _figure(svg, legend, b.caption)


def line_chart(b: LineChart) -> str:
    """Lines with markers (up to 40 points), legend outside; marks at one x share one line and label."""
    series, xlabel, ylabel, marks, caption, ymax = b.series, b.xlabel, b.ylabel, b.marks, b.caption, b.ymax
    if not series:
        return ""
    # identical series are drawn once, named together
    merged: dict[tuple[Any, ...], list[str]] = {}
    for name, pts in series.items():
        merged.setdefault(tuple(pts), []).append(name)
    xs = [x for pts in merged for x, _ in pts]
    ys = [y for pts in merged for _, y in pts]
    x0, x1 = min(xs), max(xs)
    if x1 <= x0:
        x1 = x0 + 1
    xt = nice_ticks(x0, x1, 6)
    yt = nice_ticks(0, ymax if ymax is not None else (max(ys) or 1), 5)

    def sx(x: float) -> float:
        return L + (x - xt[0]) / (xt[-1] - xt[0]) * (W - L - R)

    def sy(y: float) -> float:

        return H - B - y / yt[-1] * (H - B - T)

    svg = _frame(xlabel, ylabel, yt, sy, ylabel)
    for x in xt:
        svg.append(
            f"<line x1='{sx(x):.1f}' y1='{H - B}' x2='{sx(x):.1f}' y2='{H - B + 4}' stroke='#555'/>"
            f"<text x='{sx(x):.1f}' y='{H - B + 16}' text-anchor='middle'>{_fmt(x)}</text>"
        )
    at: dict[float, list[str]] = {}
    for name, mx in (marks or {}).items():  # marks at one x share one line and one label
        if mx is not None and xt[0] <= mx <= xt[-1]:
            at.setdefault(mx, []).append(name)
    for k, (x, names) in enumerate(sorted(at.items())):
        name = " = ".join(names) + f" {x:g} s"
        svg.append(
            f"<line x1='{sx(x):.1f}' y1='{T}' x2='{sx(x):.1f}' y2='{H - B}' stroke='#000' stroke-dasharray='4 3'/>"
            f"<text x='{sx(x) + 4:.1f}' y='{T + 10 + 13 * k}'>{html.escape(name)}</text>"
        )
    legend = []
    for i, (tpts, names) in enumerate(merged.items()):
        pts = list(tpts)
        c, d = COLORS[i % len(COLORS)], DASHES[i % len(DASHES)]
        p = " ".join(f"{sx(x):.1f},{sy(y):.1f}" for x, y in pts)
        label = " = ".join(names)
        svg.append(
            f"<polyline fill='none' stroke='{c}' stroke-width='2.2' stroke-dasharray='{d}' points='{p}'>"
            f"<title>{html.escape(label)}</title></polyline>"
        )
        if len(pts) <= 40:
            svg.extend(_marker(i, sx(x), sy(y), c) for x, y in pts)
        legend.append((label + (" (same points)" if len(names) > 1 else ""), c, d))
    return _figure(svg, _legend(legend), caption)
