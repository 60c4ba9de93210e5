"""The report as one self-contained HTML dashboard: headline cards, a table of contents, inline SVG
charts with real axes and ticks, every example linked to its session's timeline. No script, no fetch.

Drawn from the same blocks as the Markdown (stallscan.report.document), so both say the same thing.
"""

from __future__ import annotations

import html
import re
from typing import Any

from stallscan.report.charts import cost_chart, gap_chart, recovery_chart
from stallscan.report.document import anchor, document, num

CSS = """
:root{--fg:#1d2330;--muted:#5d6675;--line:#d9dde4;--card:#f5f7fa;--accent:#1f5fbf;--bad:#b3261e}
*{box-sizing:border-box}body{font:14px/1.5 system-ui,-apple-system,Segoe UI,sans-serif;color:var(--fg);margin:0}
header{padding:20px 32px 8px;border-bottom:1px solid var(--line)}h1{margin:0 0 4px;font-size:22px}
.wrap{display:grid;grid-template-columns:200px minmax(0,1fr);gap:28px;padding:0 32px 48px}
nav{position:sticky;top:0;align-self:start;padding-top:20px;font-size:13px}nav ol{padding-left:18px;margin:0}
nav a{color:var(--fg);text-decoration:none}nav a:hover{color:var(--accent)}
main{min-width:0}h2{margin:28px 0 8px;padding-bottom:4px;border-bottom:2px solid var(--fg);font-size:18px}
h3{margin:20px 0 6px;font-size:15px}.cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(240px,1fr));
gap:14px;margin:14px 0}.card{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:12px 14px}
.card .big{font-size:28px;font-weight:700;line-height:1.1}.card .label{font-size:12px;text-transform:uppercase;
letter-spacing:.04em;color:var(--muted)}.card .sub{font-size:13px;color:var(--muted);margin-top:4px}
.card.keep .big{color:#2e7d32}.card.move .big{color:var(--bad)}
table{border-collapse:collapse;margin:6px 0 14px;font-size:13px}th,td{border-bottom:1px solid var(--line);
padding:3px 8px;text-align:left;vertical-align:top}th{background:var(--card);font-weight:600}
td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}.wide td{white-space:nowrap}
.wide td:last-child{white-space:normal;overflow-wrap:anywhere;min-width:14em;max-width:40em}.tw{overflow-x:auto}tr.flag td{color:var(--bad);font-weight:600}
details{margin:6px 0 14px}summary{cursor:pointer;color:var(--accent)}
ol.ex li{margin-bottom:8px}code{background:var(--card);padding:1px 4px;border-radius:3px;font-size:12.5px}
blockquote{margin:2px 0 0;color:var(--muted);font-size:13px}p.note{color:var(--muted)}
figure{margin:8px 0 16px}figcaption{font-size:12px;color:var(--muted)}svg text{font:11px system-ui,sans-serif}
.legend span{display:inline-block;margin-right:14px;font-size:12px}.legend i{display:inline-block;width:22px;
height:0;border-top:3px solid;vertical-align:middle;margin-right:5px}
"""

LINK = re.compile(r"\[([^\]]+)\]\(#([^)]*)\)")
BOLD = re.compile(r"\*\*([^*]+)\*\*")
NUMERIC = re.compile(r"^[–\-]?[\d,.]+( ?%| s| min| h| days)?$|^–$")


def _inline(s: str) -> str:
    s = html.escape(str(s), quote=False)
    s = LINK.sub(lambda m: f"<a href='#{m.group(2)}'>{m.group(1)}</a>", s)
    return BOLD.sub(lambda m: f"<strong>{m.group(1)}</strong>", s)


def _table(head: list[str], rows: list[list[Any]], opts: dict[str, Any]) -> str:
    flag_col = opts.get("flag_col")
    cls = " class='wide'" if opts.get("wide") else ""
    out = [
        f"<div class='tw'><table{cls}><thead><tr>"
        + "".join(f"<th>{html.escape(str(h))}</th>" for h in head)
        + "</tr></thead><tbody>"
    ]
    for r in rows:
        flagged = flag_col is not None and r[flag_col]
        out.append(
            ("<tr class='flag'>" if flagged else "<tr>")
            + "".join(
                f"<td class='n'>{_inline(c)}</td>" if NUMERIC.match(str(c)) else f"<td>{_inline(c)}</td>" for c in r
            )
            + "</tr>"
        )
    return "".join(out) + "</tbody></table></div>"


def _cards(items: list[dict[str, Any]]) -> str:
    out = ["<div class='cards'>"]
    for it in items:
        if it["key"] == "silent":
            big, sub = f"{it['per_1000']:.1f} per 1,000 turns", f"{num(it['silent'])} of {num(it['turns'])} turns"
            w = it.get("worst_harness")
            if w:
                sub += f"; worst harness {w['key']} ({num(w['silent'])} of {num(w['turns'])})"
            cls = ""
        elif it["key"] == "misread":
            big = f"{num(it['misread'])} misread turns"
            sub = (
                f"of {num(it['records'])} at {num(it['threshold'])} s: {num(it['auto_as_human'])} automatic read as "
                f"human, {num(it['human_as_auto'])} human read as automatic"
            )
            cls = ""
        elif it["key"] == "recommendation":
            big = f"set {num(it['set_threshold'])} s"
            iv, pl = it.get("interval"), it.get("plateau")
            sub = it["verdict"] + (f": lowest cost on {pl[0]:.2f}–{pl[1]:.2f} s" if pl else "")
            sub += f" (95% {iv[0]:.2f}–{iv[1]:.2f} s)" if iv else ""
            sub += f", {num(it['errors'])} errors; current {num(it['current_threshold'])} s"
            cls = " " + it["verdict"].split()[0]
        elif it["key"] == "rule_change":
            big = str(it.get("value", ""))
            sub = (
                f"removes {num(it['removed'])} of the router's errors, adds {num(it['added'])}"
                if it.get("removed")
                else "no variant lowers the router's cost"
            )
            cls = ""
        else:
            big, sub, cls = str(it.get("value", "")), "", ""
        out.append(
            f"<div class='card{cls}'><div class='label'>{html.escape(it['label'])}</div>"
            f"<div class='big'>{html.escape(big)}</div><div class='sub'>{html.escape(sub)}</div></div>"
        )
    return "".join(out) + "</div>"


def _examples(items: list[dict[str, Any]], data: dict[str, Any]) -> str:
    out = ["<ol class='ex'>"]
    have = set(data.get("timelines") or {})
    for e in items:
        target = f"#{anchor(e['session_id'])}" if e["session_id"] in have else None
        title = html.escape(f"{e['kind']} ({e['harness']})")
        link = f"<a href='{target}'>{title}</a>" if target else title
        out.append(
            f"<li>{link}: {html.escape(e['why'])}. <code>{html.escape(e['show'])}</code>"
            + (f"<blockquote>{html.escape(e['excerpt'])}</blockquote>" if e["excerpt"] else "")
            + "</li>"
        )
    return "".join(out) + "</ol>"


def _blocks(blocks: list[tuple[Any, ...]], data: dict[str, Any]) -> str:
    charts = {"gaps": gap_chart, "recovery": recovery_chart, "cost": cost_chart}
    out = []
    for b in blocks:
        kind = b[0]
        if kind == "h":
            out.append(f"<h{b[1]} id='{html.escape(b[2])}'>{html.escape(b[3])}</h{b[1]}>")
        elif kind == "p":
            out.append(f"<p>{_inline(b[1])}</p>")
        elif kind == "cards":
            out.append(_cards(b[1]))
        elif kind == "list":
            out.append("<ul>" + "".join(f"<li>{_inline(x)}</li>" for x in b[1]) + "</ul>")
        elif kind == "examples":
            out.append(_examples(b[1], data))
        elif kind == "table":
            out.append(_table(b[1], b[2], b[3]))
        elif kind == "chart":
            out.append(charts[b[1]](data))
        elif kind == "details":
            out.append(f"<details><summary>{html.escape(b[1])}</summary>{_blocks(b[2], data)}</details>")
    return "\n".join(x for x in out if x)


def to_html(data: dict[str, Any]) -> str:
    blocks = document(data)
    toc = [b for b in blocks if b[0] == "h" and b[1] == 2]
    nav = (
        "<nav><strong>Contents</strong><ol>"
        + "".join(f"<li><a href='#{html.escape(b[2])}'>{html.escape(b[3])}</a></li>" for b in toc)
        + "</ol></nav>"
    )
    o = data.get("options") or {}
    return (
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width,initial-scale=1'><title>stallscan report</title>"
        f"<style>{CSS}</style></head><body><header><h1>stallscan report</h1>"
        f"<p class='note'>Silent plan-as-answer endings, misread turns and the gap threshold, replayed from the "
        f"transcripts (threshold {num(o.get('threshold'))} s, retry bound {num(o.get('retry_bound'))}).</p></header>"
        f"<div class='wrap'>{nav}<main>{_blocks(blocks, data)}</main></div></body></html>\n"
    )
