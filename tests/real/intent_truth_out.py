"""The output of tests/real/intent_truth.py: the per-class table it prints and the precision.toml text it writes."""

from __future__ import annotations

import json
from datetime import UTC, datetime


def _f(x, nd=4):
    return "nan" if x is None else repr(round(x, nd))


def _class_rows(table: dict[str, dict]) -> str:
    return "".join(
        f'"{c}" = {{ positives = {t["positives"]}, detected = {t["detected"]}, false_alarms = {t["false_alarms"]} }}\n'
        for c, t in table.items()
    )


def toml_text(m: dict) -> str:
    f = _f
    return (
        "# Measured precision and recall of the silent-ending detector (narrated_intent / dropped_tool_call /\n"
        "# silent_plan_as_answer) on the hand-labelled truth set in tests/truth/. Written by\n"
        "# `python tests/real/intent_truth.py --write`; tests/real/test_real_intent_precision.py fails when a new\n"
        "# measurement falls below these figures. The report's headline estimate reads them (docs/rules.md).\n"
        "# Do not edit by hand.\n"
        f'measured_on = "{datetime.now(UTC).date().isoformat()}"\n'
        f'data_version = "{m["data_version"]}"\n'
        'truth_set = "tests/truth/intent_labels.csv, labagents_labels*.csv, intent_positives_real.csv, '
        'intent_cases.csv"\n'
        "# real text-only endings read by hand (Claude Code, Codex, Hermes, Cline), all genuine\n"
        f"real_genuine = {m['real_genuine']}\n"
        "# real plan-as-answer endings read by hand (LabAgents eval runs: plans and waits nothing answers)\n"
        f"real_plan_as_answer = {m['real_plan_as_answer']}\n"
        "# of the genuine endings above: flagged as a stall, flagged silent_plan_as_answer, one-sided 95 % bound\n"
        f"false_alarms_real = {m['false_alarms_real']}\n"
        f"silent_false_alarms_real = {m['silent_false_alarms_real']}\n"
        f"false_alarm_upper95_per_1000 = {f(m['false_alarm_upper95_per_1000_real'], 1)}\n"
        "# LabAgents labels: stalls (plan / wait) and how many flagged; genuine / question and how many flagged\n"
        f"labagents_positives = {m['labagents_positives']}\n"
        f"labagents_detected = {m['labagents_detected']}\n"
        f"labagents_genuine = {m['labagents_genuine']}\n"
        f"labagents_false_alarms = {m['labagents_false_alarms']}\n"
        "# every real ending read by hand: genuine ones, false alarms among them, one-sided 95 % bound per 1,000\n"
        f"real_genuine_all = {m['real_genuine_all']}\n"
        f"false_alarms_real_all = {m['false_alarms_real_all']}\n"
        f"false_alarm_upper95_per_1000_all = {f(m['false_alarm_upper95_per_1000_real_all'], 1)}\n"
        "# the headline's figures: recall on real plan-as-answer endings, precision on real endings\n"
        f"real_recall = {f(m['real_recall'])}\n"
        f"real_precision = {f(m['real_precision'])}\n"
        "# hand-written hand-offs and waits (en / zh / ja / ko) and how many were flagged\n"
        f"handoff_cases = {m['handoff_cases']}\n"
        f"false_alarms_cases = {m['false_alarms_cases']}\n"
        "# plan-as-answer shapes (real narrations with their call removed + hand-written) and how many were flagged\n"
        f"positives = {m['positives']}\n"
        f"detected = {m['detected']}\n"
        "# of the real narrations: the held-out sample (read after the intent signatures were last tuned)\n"
        f"heldout_positives = {m['recall_by_sample'].get('heldout', [0, 0])[0]}\n"
        f"heldout_detected = {m['recall_by_sample'].get('heldout', [0, 0])[1]}\n"
        "# shapes: detected / (detected + every false alarm above), and detected / positives\n"
        f"precision = {f(m['precision'])}\n"
        f"recall = {f(m['recall'])}\n"
        "# which truth files were read (labels from the truth-labels branch change the figures: re-measure)\n"
        f"truth_files = {json.dumps(m['truth_files'])}\n"
        "\n# per class (docs/rules.md): real LabAgents endings\n[classes_real]\n"
        + _class_rows(m["classes_real"])
        + "\n# per class: shapes (real narrations replayed after a tool round + hand-written cases)\n[classes_shapes]\n"
        + _class_rows(m["classes_shapes"])
    )


def class_lines(m: dict) -> list[str]:
    """The per-class table, printed by the script and the test: real LabAgents endings (recall, false alarms
    attributed to the class, precision), the shapes (real narrations + hand-written), and the public real
    endings replayed as their shape sentence (when public_positives.csv is present)."""

    def pct(x):
        return "-" if x is None else f"{x:.1%}"

    empty = {"positives": 0, "detected": 0, "false_alarms": 0, "recall": None, "precision": None}
    pub = m.get("classes_public") or {}
    keys = list(m["classes_real"]) + [k for k in list(m["classes_shapes"]) + list(pub) if k not in m["classes_real"]]
    keys = list(dict.fromkeys(keys))
    out = [
        f"{'class':<28} {'real pos':>8} {'det':>4} {'recall':>7} {'FA':>3} {'prec':>7} | {'shapes':>6} {'det':>4} "
        f"{'recall':>7} {'FA':>3} | {'public':>6} {'det':>4}"
    ]
    for c in keys:
        r, s, p = m["classes_real"].get(c, empty), m["classes_shapes"].get(c, empty), pub.get(c, empty)
        out.append(
            f"{c:<28} {r['positives']:>8} {r['detected']:>4} {pct(r['recall']):>7} {r['false_alarms']:>3} "
            f"{pct(r['precision']):>7} | {s['positives']:>6} {s['detected']:>4} {pct(s['recall']):>7} "
            f"{s['false_alarms']:>3} | {p['positives']:>6} {p['detected']:>4}"
        )
    out.append(
        f"{'overall':<28} {m['labagents_positives']:>8} {m['labagents_detected']:>4} {pct(m['real_recall']):>7} "
        f"{m['false_alarms_real_all']:>3} {pct(m['real_precision']):>7} | {m['positives']:>6} {m['detected']:>4} "
        f"{pct(m['recall']):>7} {m['false_alarms_cases']:>3} | {m.get('public_positives', 0):>6} "
        f"{m.get('public_detected', 0):>4}"
    )
    return out
