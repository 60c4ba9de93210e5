"""The answer first: the block every report format opens with, drawn from the report data dict alone.

`headline(data)` answers the three questions (how often silent plan-as-answer endings happen, how many
turns the router misreads, which threshold or rule it should use) and picks the three worst examples,
each with the `stallscan show` command that opens it. Every renderer (terminal, markdown, HTML, JSON)
prints `headline(data)` and nothing else for this block, so the figures agree across formats.

Extension point: other sections add lines with `add_provider(fn)`, where `fn(data) -> list[dict[str, Any]]`
returns items {"key": ..., "label": ..., "value": ..., "text": ...} (text is the sentence printed).
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from typing import Any

from stallscan.report.estimate import estimate, estimate_sentence

PROVIDERS: list[Callable[[dict[str, Any]], list[dict[str, Any]]]] = []

RULE_NAMES = {
    "completion": "the completion rule (previous reply not final)",
    "first": "the first-message rule",
    "no_time": "the no-usable-time rule",
    "header": "the x-initiator header",
    "gap": "the gap rule",
}


RULE_SHORT = {
    "completion": "completion rule",
    "first": "first-message rule",
    "no_time": "no-usable-time rule",
    "header": "x-initiator header",
    "gap": "gap rule",
}


def add_provider(
    fn: Callable[[dict[str, Any]], list[dict[str, Any]]],
) -> Callable[[dict[str, Any]], list[dict[str, Any]]]:
    """Register a function adding headline items (e.g. from a section registered elsewhere)."""
    if fn not in PROVIDERS:
        PROVIDERS.append(fn)
    return fn


def _n(x: float | int) -> str:
    return f"{x:,.0f}" if float(x).is_integer() else f"{x:,.1f}"


def duration(s: float) -> str:
    """Seconds as a person reads them: 0.4 s, 12 s, 4.2 min, 3.1 h, 7.4 days."""
    if s < 10:
        return f"{s:.2g} s" if s < 1 else f"{s:.1f} s"
    if s < 90:
        return f"{s:.0f} s"
    if s < 5400:
        return f"{s / 60:.1f} min"
    if s < 172800:
        return f"{s / 3600:.1f} h"
    return f"{s / 86400:.1f} days"


def _count(n: int, one: str, many: str) -> str:
    return f"{n:,} {one if n == 1 else many}"


def _pct(a: int, b: int) -> str:
    return f"{a / b:.1%}" if b else "–"


def _silent(data: dict[str, Any]) -> dict[str, Any] | None:
    st = data.get("stalls")
    if not st:
        return None
    rates = st.get("rates", {})
    harness = rates.get("harness", [])
    turns = sum(r["turns"] for r in harness)
    silent = sum(r["silent"] for r in harness)
    exhausted = sum(r["exhausted"] for r in harness)

    def worst(dim: str) -> dict[str, Any] | None:
        rows = [r for r in rates.get(dim, []) if r["silent"]]
        if not rows:
            return None
        r = max(rows, key=lambda r: (r["silent_per_1000"], r["turns"]))
        return {"key": r["key"], "silent": r["silent"], "turns": r["turns"], "per_1000": r["silent_per_1000"]}

    per = 1000 * silent / turns if turns else 0.0
    out = {
        "silent": silent,
        "exhausted": exhausted,
        "turns": turns,
        "per_1000": round(per, 1),
        "worst_harness": worst("harness"),
        "worst_model": worst("model"),
    }
    text = (
        f"{silent:,} of {turns:,} turns ({per:.1f} per 1,000) ended on a plan nobody re-prompted"
        if silent
        else f"No turn of {turns:,} was flagged as ending on a plan nobody re-prompted"
    )
    if exhausted:
        text += f"; {exhausted:,} more ended on a plan after {st['retry_bound']} re-prompts (bound exhausted)"
    bits: list[str] = []
    for label, w in (("harness", out["worst_harness"]), ("model", out["worst_model"])):
        if w:
            bits.append(
                f"{'Worst' if not bits else 'worst'} {label} {w['key']} ({w['silent']:,} of {w['turns']:,} turns)"
            )
    out["text"] = text + (". " + "; ".join(bits) if bits else "") + "."
    return out


def _misread(data: dict[str, Any]) -> dict[str, Any] | None:
    b = data.get("boundaries")
    if not b or "misread" not in b:
        return None
    pop = b["misread"]
    t, p, tr = pop["turns"], pop["prompts"], pop["tool_results"]
    thr = b["threshold"]
    out = {
        "threshold": thr,
        "misread": t["misread"],
        "records": t["records"],
        "auto_as_human": t["auto_as_human"],
        "human_as_auto": t["human_as_auto"],
        "prompts": p,
        "tool_results": tr,
    }
    text = (
        f"{t['misread']:,} of {t['records']:,} user-role records that start a request "
        f"({_pct(t['misread'], t['records'])}) are misread at {thr:g} s: "
        f"{t['auto_as_human']:,} automatic prompts taken for a person, {t['human_as_auto']:,} turns a person wrote "
        "taken for automatic."
    )
    if tr["records"]:
        text += (
            f" Among them {_count(tr['misread'], 'is a tool result', 'are tool results')} "
            f"({tr['human_as_auto']:,} carrying a person's feedback) and {_count(p['misread'], 'is a prompt', 'are prompts')} "
            f"(the {p['records']:,} records the threshold sweep scores)."
        )
    out["text"] = text
    return out


def _recommendation(data: dict[str, Any], misread: dict[str, Any] | None) -> dict[str, Any] | None:
    th = data.get("threshold")
    if not th:
        return None
    rec = next((r for r in th.get("recommendations", []) if r["policy"] == "router" and r["group"] == "all"), None)
    if not rec or rec.get("threshold") is None:
        return None
    cur_t = data["options"]["threshold"]
    cur = rec.get("at_current")
    if cur is None:
        for c in th.get("curves", []):
            if c["policy"] == "router" and c["group"] == "all":
                cur = next((pt for pt in c["points"] if abs(pt["threshold"] - cur_t) < 1e-9), None)
    iv, plateau = rec.get("interval"), rec.get("plateau")
    out = {
        "policy": "router",
        "set_threshold": rec["threshold"],
        "verdict": rec.get("verdict", "unknown"),
        "current_threshold": cur_t,
        "on_plateau": rec.get("on_plateau"),
        "plateau": plateau,
        "interval": iv,
        "errors": rec["auto_as_human"] + rec["human_as_auto"],
        "cost": rec["cost"],
        "errors_at_current": (cur["auto_as_human"] + cur["human_as_auto"]) if cur else None,
        "cost_at_current": cur["cost"] if cur else None,
        "population": rec["n_events"],
        "gap_decided": rec["n_gap_decided"],
        "sessions": rec.get("sessions"),
        "minimum": rec.get("minimum"),
    }
    out["text"] = _threshold_text(out)
    b = data.get("boundaries") or {}
    rules = b.get("decided_by") or {}
    if misread and misread["misread"]:
        by_rule = {
            k: v["auto_as_human"] + v["human_as_auto"]
            for k, v in rules.items()
            if v["auto_as_human"] + v["human_as_auto"]
        }
        out["errors_by_rule"] = by_rule
        if by_rule:
            top, n = max(by_rule.items(), key=lambda kv: kv[1])
            not_gap = sum(v for k, v in by_rule.items() if k != "gap")
            if top == "gap":
                out["text"] += (
                    f" {n:,} of {misread['misread']:,} misread turns come from the gap rule (the only rule the "
                    f"threshold moves); {not_gap:,} from rules that never look at the gap."
                )
            else:
                out["text"] += (
                    f" {n:,} of {misread['misread']:,} misread turns come from {RULE_NAMES.get(top, top)}, "
                    f"{not_gap:,} from rules that never look at the gap; the gap rule makes {by_rule.get('gap', 0):,}."
                )
    return out


def _silent_short(silent: dict[str, Any], est: dict[str, Any] | None) -> str:
    """The silent-endings item in one or two terminal lines: the count, and the estimated true rate."""
    text = f"{silent['silent']:,} of {silent['turns']:,} turns flagged"
    if silent["exhausted"]:
        text += f", {silent['exhausted']:,} more after the retry bound"
    if est:
        text += f"; true rate about {est['per_1000']:g} per 1,000 (95 % {est['low']:g}–{est['high']:g})"
    return text + "."


def _threshold_short(r: dict[str, Any]) -> str:
    """The threshold advice in one terminal line or two."""
    cur, pl = r["current_threshold"], r["plateau"]
    plateau = f"{pl[0]:.2f}–{pl[1]:.2f} s" if pl else "–"
    if r["verdict"] == "too few to recommend":
        return f"too few to recommend ({r['gap_decided']:,} gap-decided prompts); set {cur:g} s (unchanged)."
    if r["verdict"] == "keep":
        return f"set {cur:g} s (unchanged): on the lowest-cost plateau {plateau}."
    return f"set {r['set_threshold']:.2f} s: {cur:g} s is off the lowest-cost plateau {plateau}."


def _threshold_text(r: dict[str, Any]) -> str:
    """The threshold advice in one voice: the plateau as a range, where the current value lies, what to set."""
    cur, lo_hi, iv = r["current_threshold"], r["plateau"], r["interval"]
    plateau = f"{lo_hi[0]:.2f}–{lo_hi[1]:.2f} s" if lo_hi else "–"
    ivs = f"; 95% interval of the choice {iv[0]:.2f}–{iv[1]:.2f} s" if iv else ""
    among = f"{r['errors']:,} errors among the {r['population']:,} prompts the sweep scores"
    if r["verdict"] == "too few to recommend":
        m = r.get("minimum") or {}
        return (
            f"Too few to recommend a threshold: {_count(r['gap_decided'], 'prompt', 'prompts')} decided by the gap "
            f"rule in {_count(r.get('sessions') or 0, 'session', 'sessions')} (a recommendation needs at least "
            f"{m.get('gap_prompts', '?')} and {m.get('sessions', '?')} sessions); set {cur:g} s (unchanged)."
        )
    if r["verdict"] == "keep":
        return f"Set {cur:g} s (unchanged): it lies on the lowest-cost plateau {plateau} ({among}{ivs})."
    if r["verdict"] == "move":
        now = (
            f"; {r['errors_at_current']:,} errors at {cur:g} s, cost {_n(r['cost_at_current'])} against {_n(r['cost'])}"
            if r["errors_at_current"] is not None
            else ""
        )
        return (
            f"Set {r['set_threshold']:.2f} s: {cur:g} s lies off the lowest-cost plateau {plateau} ({among}{now}{ivs})."
        )
    return f"Lowest cost on {plateau} ({among})."


def _examples(data: dict[str, Any], k: int = 3) -> list[dict[str, Any]]:
    refs = data.get("session_refs") or {}
    extra = (data.get("options") or {}).get("show_args") or ""
    silent = [
        {
            "kind": "silent ending" if r["outcome"] == "silent_plan_as_answer" else "plan after exhausted bound",
            "session_id": r["session_id"],
            "line": r.get("line"),
            "seq": r.get("seq"),
            "ts": r.get("ts"),
            "harness": r.get("harness"),
            "why": _why_stall(r),
            "excerpt": r.get("excerpt") or "",
        }
        for r in (data.get("stalls") or {}).get("silent_endings", [])
    ]
    b = data.get("boundaries") or {}
    misread = [
        {
            "kind": "misread turn",
            "session_id": r["session_id"],
            "line": r.get("line"),
            "seq": r.get("seq"),
            "ts": r.get("ts"),
            "harness": r.get("harness"),
            "truth": r.get("truth"),
            "truth_note": r.get("truth_note"),
            "why": _why_misread(r),
            "origin_rule": r.get("origin_rule"),
            "excerpt": r.get("excerpt") or "",
        }
        for r in (b["examples"] if "examples" in b else b.get("misclassified", []))
    ]
    picked: list[dict[str, Any]] = []
    sessions: set[str] = set()
    harnesses: set[str | None] = set()
    # alternate the two lists: a new session of a new harness while there is one, then a new session, then any
    for rule in ("harness", "session", "any"):
        queues = [list(silent), list(misread)]
        while len(picked) < k and any(queues):
            for q in queues:
                while q and len(picked) < k:
                    e = q.pop(0)
                    if e in picked or (rule != "any" and e["session_id"] in sessions):
                        continue
                    if rule == "harness" and e["harness"] in harnesses:
                        continue
                    picked.append(e)
                    sessions.add(e["session_id"])
                    harnesses.add(e["harness"])
                    break
    for e in picked:
        ref = refs.get(e["session_id"], e["session_id"])
        e["ref"] = ref
        around = f" --around {e['seq']}" if e.get("seq") is not None else ""
        e["show"] = f"stallscan show {shlex.quote(ref)} --flagged{around}{extra}"
        e["excerpt"] = " ".join(e["excerpt"].split())[:160]
    return picked


def _best_variant(data: dict[str, Any]) -> dict[str, Any]:
    """The single rule variant with the largest net error reduction (summed over groups), for the card."""
    net: dict[str, list[int]] = {}
    for v in (data.get("threshold") or {}).get("variants") or []:
        if "+" in v["policy"]:  # combinations are not a single rule change
            continue
        n = net.setdefault(v["policy"], [0, 0])
        n[0] += v["removed"]
        n[1] += v["added"]
    if not net:
        return {}
    best = max(net, key=lambda k: net[k][0] - net[k][1])
    removed, added = net[best]
    if removed - added <= 0:
        return {"value": "keep the order", "removed": 0, "added": 0}
    return {"value": best, "removed": removed, "added": added}


def _precision_note(p: dict[str, Any] | None) -> str | None:
    """The detector's measured false-alarm rate, short (stallscan/data/precision.toml via the stalls data)."""
    if not p:
        return None
    stale = "" if p.get("current", True) else ", on older signatures"
    return (
        f"(Detector: {_n(p['false_alarms_real'])} false alarms in {_n(p['real_genuine'])} hand-labelled real "
        f"endings, at most {p['false_alarm_upper95_per_1000']:g} per 1,000 at 95%{stale}.)"
    )


def headline(data: dict[str, Any]) -> dict[str, Any]:
    """The opening block: items in order (each with `text`) and the worst examples."""
    silent = _silent(data)
    misread = _misread(data)
    rec = _recommendation(data, misread)
    items = []
    if silent:
        p = (data.get("stalls") or {}).get("precision")
        est = estimate(silent["silent"], silent["turns"], p)  # issue 25: the rate behind the count
        trust = estimate_sentence(est) if est else _precision_note(p)
        if trust:
            silent = {**silent, "text": f"{silent['text']} {trust}", "precision": trust, "estimate": est}
        silent["short"] = _silent_short(silent, est)
        items.append({"key": "silent", "label": "Silent plan-as-answer endings", **silent})
    if misread:
        m = misread
        short = (
            f"{m['misread']:,} of {m['records']:,} records that start a request ({_pct(m['misread'], m['records'])})"
        )
        short += f" at {m['threshold']:g} s: {_count(m['prompts']['misread'], 'prompt', 'prompts')}, "
        short += f"{_count(m['tool_results']['misread'], 'tool result', 'tool results')}."
        items.append({"key": "misread", "label": "Misread turns (router order)", **misread, "short": short})
    if rec:
        items.append({"key": "recommendation", "label": "Threshold", **rec, "short": _threshold_short(rec)})
    advice = (data.get("threshold") or {}).get("rule_advice")
    if advice:  # the router rule variants (stallscan.sweep.variants): the one rule change worth making
        best = _best_variant(data)
        short = (
            f"{best['value']} removes {best['removed']:,} of the router's errors and adds {best['added']:,}."
            if best.get("removed")
            else "no single rule change beats the router order."
        )
        items.append({"key": "rule_change", "label": "Rule change", "text": advice, **best, "short": short})
    for fn in PROVIDERS:
        items.extend(fn(data) or [])
    return {"items": items, "examples": _examples(data)}


def _why_misread(r: dict[str, Any]) -> str:
    """A misread turn in the one vocabulary of truth: what it was (human / automatic / tool result), what the
    router read it as, when and by which rule, and the envelope's qualifier with the label rule."""
    truth = r.get("truth") or ("human" if r["error"] == "human_as_auto" else "automatic")
    read_as = "automatic" if r["error"] == "human_as_auto" else "human"
    gap = f" {duration(r['gap_s'])} after the reply" if r.get("gap_s") is not None else ""
    rule = RULE_SHORT.get(r["decided_by"], r["decided_by"])
    note = f"; {r['truth_note']}" if r.get("truth_note") else ""
    return f"{truth} read as {read_as}{gap} ({rule}{note})"


def _why_stall(r: dict[str, Any]) -> str:
    """What decided a flagged ending: the round kind, its signature and the finish reason (said once: a
    dropped call's signature is the finish reason itself)."""
    sig, finish = r.get("signature") or "-", r.get("finish_reason") or "null"
    why = f"{r['round_kind']} / {sig}"
    return why if sig == f"finish:{finish}" else f"{why}, finish {finish}"
