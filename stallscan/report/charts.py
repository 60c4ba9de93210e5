"""Inline SVG charts for the HTML report, drawn from the chart blocks (stallscan.report.blocks): real axes with ticks and titles, legends outside the plot (so
labels never overprint), series told apart by colour and by dash and marker shape; series with the
same points are drawn once and named together instead of hiding one under the other."""

from __future__ import annotations

import html
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from stallscan.report.blocks import BarChart, LineChart

COLORS = ["#1f5fbf", "#d9480f", "#2b8a3e", "#7048e8", "#c2255c", "#5c940d", "#0b7285", "#862e9c"]
DASHES = ["", "7 4", "2 3", "10 3 2 3", "4 2", "1 4"]
W, H = 720, 280
L, R, T, B = 56, 16, 16, 52  # plot margins: left (y ticks), right, top, bottom (x ticks + title)


ROW = 14  # px per row of reference-line labels, in a band above the plot
CHAR_W = 7.0  # px per character of an 11 px label: wider than system-ui's average, so boxes are not underestimated
MERGE_PX = 6  # reference lines closer than this share one label
PAD = 6  # px kept free between two labels, and between a label and another reference line


@dataclass(frozen=True)
class Placed:
    """A reference-line label: its text, the x (px) of the line(s) it names, its row above the plot (0 just
    above it), where its text starts (or ends: anchor "end") and the x extent of its box."""

    text: str
    xs: tuple[float, ...]
    row: int
    tx: float
    anchor: str
    box: tuple[float, float]


def _group_text(members: list[tuple[str, str]]) -> str:
    by_value: dict[str, list[str]] = {}
    for name, value in members:
        by_value.setdefault(value, []).append(name)
    return ", ".join(" = ".join(names) + f" {value}" for value, names in by_value.items())


def place_marks(px: dict[str, float], values: dict[str, str]) -> list[Placed]:
    """Labels for reference lines at `px` (name -> x in px), each naming its value: lines within MERGE_PX
    share one label ("best router = current 2 s"), and labels take rows in a band above the plot so that
    no two overlap, each stays inside the chart, and (wherever some row allows it) no other line crosses a
    label: a line rises only to its own label's row. Placed right to left, each right of its line in the
    lowest row that allows it, else left of it (at the chart's right edge)."""
    groups: list[list[tuple[str, float]]] = []
    for name, x in sorted(px.items(), key=lambda kv: kv[1]):
        if groups and x - groups[-1][-1][1] <= MERGE_PX:
            groups[-1].append((name, x))
        else:
            groups.append([(name, x)])
    placed: list[Placed] = []
    for g in reversed(groups):
        text = _group_text([(n, values[n]) for n, _ in g])
        xs = tuple(sorted({round(x, 1) for _, x in g}))
        w = len(text) * CHAR_W
        # (anchor, text x, box left, box right): right of the line(s), else left of them
        ways = [("start", xs[-1] + 4, xs[-1] + 4, xs[-1] + 4 + w), ("end", xs[0] - 4, xs[0] - 4 - w, xs[0] - 4)]
        fits = [f for f in ways if f[2] >= 2 and f[3] <= W - 2]
        if not fits:  # wider than either side: shifted to lie inside the chart
            lo = min(max(2.0, xs[-1] - w / 2), W - 2 - w)
            fits = [("start", lo, lo, lo + w)]
        # right of the line in any row before left of it: a label left of its line would sit over the
        # lines still to place (further left), which then could not rise past it. Failing that (rare), any
        # row where the label overlaps no other, even if a line crosses it
        spots = [(strict, f, row) for strict in (True, False) for f in fits for row in range(len(groups) + 1)]
        _, (a, tx, x0, x1), row = next(s for s in spots if _free(placed, xs, s[2], s[1][2], s[1][3], s[0]))
        placed.append(Placed(text, xs, row, tx, a, (x0, x1)))
    return placed


def _free(placed: list[Placed], xs: tuple[float, ...], row: int, x0: float, x1: float, strict: bool) -> bool:
    for p in placed:
        if p.row == row and not (x1 + PAD <= p.box[0] or p.box[1] + PAD <= x0):
            return False  # two labels in one row overlap
        if strict and p.row >= row and any(x0 - PAD < x < x1 + PAD for x in p.xs):
            return False  # that label's line rises through this one
        if strict and p.row <= row and any(p.box[0] - PAD < x < p.box[1] + PAD for x in xs):
            return False  # this line rises through (or beside) that label
    return True


def _draw_mark(p: Placed, band: float, bottom: float) -> str:
    y = T + band - p.row * ROW - 4
    lines = "".join(
        f"<line x1='{x:.1f}' y1='{y - 10:g}' x2='{x:.1f}' y2='{bottom:g}' stroke='#000' stroke-dasharray='4 3'/>"
        for x in p.xs
    )
    anchor = " text-anchor='end'" if p.anchor == "end" else ""
    return f"{lines}<text class='mark' x='{p.tx:.1f}' y='{y:g}'{anchor}>{html.escape(p.text)}</text>"


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


def _frame(
    xlabel: str, ylabel: str, yticks: list[float], sy: Callable[[float], float], title: str, band: float = 0
) -> list[str]:
    """Axes, ticks and titles; `band` px above the plot hold the reference-line labels (the plot keeps its size)."""
    e = html.escape
    top, h = T + band, H + band
    out = [
        f"<svg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 {W} {h:g}' width='{W}' height='{h:g}' role='img' "
        f"aria-label='{e(title)}'>",
        f"<line x1='{L}' y1='{top:g}' x2='{L}' y2='{h - B:g}' stroke='#555'/>",
        f"<line x1='{L}' y1='{h - B:g}' x2='{W - R}' y2='{h - B:g}' stroke='#555'/>",
    ]
    for y in yticks:
        py = sy(y)
        out.append(
            f"<line x1='{L - 4}' y1='{py:.1f}' x2='{W - R}' y2='{py:.1f}' stroke='#e3e6ea'/>"
            f"<text x='{L - 7}' y='{py + 3.5:.1f}' text-anchor='end'>{_fmt(y)}</text>"
        )
    out.append(f"<text x='{(L + W - R) / 2:.0f}' y='{h - 8:g}' text-anchor='middle'>{e(xlabel)}</text>")
    out.append(
        f"<text transform='translate(14 {(top + h - B) / 2:.0f}) rotate(-90)' text-anchor='middle'>{e(ylabel)}</text>"
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

    bw = (W - L - R) / len(b.bins)
    thr = b.mark
    xt: float | None = None  # the marked x in px
    for i, (lo, hi) in enumerate(b.bins):
        if thr is not None and lo <= thr and (hi is None or thr < hi):
            xt = L + i * bw + (0 if hi is None else (thr - lo) / (hi - lo)) * bw
    placed = [] if xt is None or thr is None else place_marks({"threshold": xt}, {"threshold": f"{_fmt(thr)} s"})
    band = ROW * len(placed)
    bottom = H + band - B

    def sy(y: float) -> float:
        return bottom - y / top * (H - B - T)

    svg = _frame(b.xlabel, b.ylabel, yt, sy, b.title, band)
    for i, (lo, hi) in enumerate(b.bins):
        x0 = L + i * bw
        label = f"{lo:g}–{hi:g}" if hi is not None else f"≥ {lo:g}"
        svg.append(
            f"<line x1='{x0:.1f}' y1='{bottom:g}' x2='{x0:.1f}' y2='{bottom + 4:g}' stroke='#555'/>"
            f"<text x='{x0:.1f}' y='{bottom + 15:g}' text-anchor='middle' font-size='10'>{lo:g}</text>"
        )
        inner = bw * 0.8 / len(names)
        for j, o in enumerate(names):
            n = b.series[o][i]
            if n:
                x = x0 + bw * 0.1 + j * inner
                svg.append(
                    f"<rect x='{x:.1f}' y='{sy(n):.1f}' width='{inner - 1:.1f}' height='{bottom - sy(n):.1f}' "
                    f"fill='{COLORS[j % len(COLORS)]}'><title>{html.escape(o)} {label} s: {n}</title></rect>"
                )
    svg += [_draw_mark(p, band, bottom) for p in placed]
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

    shown = {n: x for n, x in (marks or {}).items() if x is not None and xt[0] <= x <= xt[-1]}
    placed = place_marks({n: sx(x) for n, x in shown.items()}, {n: f"{x:g} s" for n, x in shown.items()})
    band = ROW * (max((p.row for p in placed), default=-1) + 1)
    bottom = H + band - B

    def sy(y: float) -> float:
        return bottom - y / yt[-1] * (H - B - T)

    svg = _frame(xlabel, ylabel, yt, sy, ylabel, band)
    for x in xt:
        svg.append(
            f"<line x1='{sx(x):.1f}' y1='{bottom:g}' x2='{sx(x):.1f}' y2='{bottom + 4:g}' stroke='#555'/>"
            f"<text x='{sx(x):.1f}' y='{bottom + 16:g}' text-anchor='middle'>{_fmt(x)}</text>"
        )
    svg += [_draw_mark(p, band, bottom) for p in placed]
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
