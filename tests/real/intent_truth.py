"""Precision and recall of the narrated-intent rule against the hand-labelled truth set in tests/truth/.

The labels were written by reading each reply and what followed it in its file, never by running the rules:
  intent_labels.csv          every text-only assistant reply (turn-final, or followed only by automatic
                             records) in the real Claude Code, Codex, Hermes session, Hermes trajectory and
                             Cline files, keyed by file + line + a hash of the stripped text; all genuine.
                             `ending`: turn_final (the turn's delivered reply) or followed_by_automatic (the
                             model stopped, but a stop hook, a harness nudge or an app record carried on).
  intent_positives_real.csv  real narrations (15-400 chars) that preceded a tool call in the Claude Code /
                             Codex / Cline files, in md5-of-text order: sample `tuning` = the first 45 / 35 / 25,
                             `heldout` = the next 35 / 25 / 15, read after the last intent signatures were
                             written; each marked `plan` when, with the call removed, the reply would be a
                             plan-as-answer ending, `skip` otherwise.
  intent_cases.csv           hand-written endings (en / zh / ja / ko): hand-offs and waits the vetoes must
                             pass, and plan shapes with the source of each shape.

The real files are never copied: positives are read from them at run time by their key. Each text is replayed
as the last round of a turn after one tool round (finish reason `stop`, no call), the case narrated_intent
exists for; real endings are replayed in place with the turn-boundary truth.

Run `python tests/real/intent_truth.py` to print the figures, `--write` to store them in
stallscan/data/precision.toml (the report prints them next to its stall counts).
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
import sys
from datetime import UTC, datetime
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TRUTH = REPO / "tests" / "truth"
PRECISION_TOML = REPO / "stallscan" / "data" / "precision.toml"
REAL_DIRS = ("claude-code", "codex", "hermes-session", "hermes-trajectory", "cline")


def real_root() -> Path:
    env = os.environ.get("STALLSCAN_REAL_DATA")
    return (Path(env) if env else REPO.parent / "shared" / "data" / "real").resolve()


def strip(text: str | None) -> str:
    return (text or "").strip(" \t\n\r")


def text_sha(text: str | None) -> str:
    return hashlib.sha256(strip(text).encode()).hexdigest()[:12]


def read_csv(name: str) -> list[dict]:
    with open(TRUTH / name, encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


def _rows(con, q: str, params=None) -> list[dict]:
    cur = con.execute(q, params or [])
    cols = [d[0] for d in cur.description]
    return [dict(zip(cols, r)) for r in cur.fetchall()]


def _synthetic(con, texts: list[str]) -> None:
    """One session per text: human prompt, a tool round, its result, then the text as a reply with no call."""
    rows = []
    for i, text in enumerate(texts):
        steps = [
            ("user", "message", "please carry on with the task", [], None),
            ("assistant", "message", None, [{"id": f"c{i}", "name": "read_file", "arguments": "{}"}], "tool_calls"),
            ("tool", "tool_result", "ok", [], None),
            ("assistant", "message", text, [], "stop"),
        ]
        for seq, (role, kind, t, calls, fr) in enumerate(steps, 1):
            rows.append(
                (f"p{i}-{seq}", "openai_chat", f"/truth/p{i}.jsonl", seq, seq, 0, 1, f"truth-{i}", seq, None, None,
                 "none", role, kind, t, calls, len(calls), None, fr, fr, None, None, None, None, None,
                 "truth-model" if role == "assistant" else None, False, None, None, json.dumps({}))
            )  # fmt: skip
    con.executemany("INSERT INTO events VALUES (" + ",".join(["?"] * 30) + ")", rows)


def _verdicts(con) -> dict[str, dict]:
    """event_id -> round_kind, signature, vetoes, and whether the replay calls the turn a silent ending."""
    return {
        r["event_id"]: r
        for r in _rows(
            con,
            "SELECT r.event_id, r.round_kind, r.signature, r.sig_hits, r.veto_hits, "
            "coalesce(t.outcome = 'silent_plan_as_answer', false) AS silent "
            "FROM rounds r LEFT JOIN turns t ON t.delivered_event_id = r.event_id",
        )
    }


def _upper95(k: int, n: int) -> float | None:
    """One-sided 95 % Clopper-Pearson upper bound of a rate seen k times in n (bisection on the binomial cdf)."""
    if n == 0:
        return None
    from math import comb

    def cdf(p: float) -> float:
        return sum(comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(k + 1))

    lo, hi = k / n, 1.0
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if cdf(mid) > 0.05 else (lo, mid)
    return hi


def measure(root: Path | None = None) -> dict:
    """Replay the truth set and count. Raises FileNotFoundError when the real data is absent."""
    from stallscan.ingest.run import ingest_paths
    from stallscan.replay.stalls import replay_stalls
    from stallscan.store.db import connect

    root = root or real_root()
    dirs = [root / d for d in REAL_DIRS]
    missing = [str(d) for d in dirs if not d.is_dir()]
    if missing:
        raise FileNotFoundError(f"real transcripts not found: {', '.join(missing)} (set STALLSCAN_REAL_DATA)")

    con = connect(":memory:")
    ingest_paths(con, [str(d) for d in dirs], fmt="auto")
    info = replay_stalls(con)
    verdict = _verdicts(con)
    events = _rows(
        con,
        "SELECT e.event_id, e.file, e.line, e.text, e.n_tool_calls, e.source_format FROM events e "
        "WHERE e.role = 'assistant'",
    )
    by_key: dict[tuple, list[dict]] = {}
    for e in events:
        rel = str(Path(e["file"]).resolve().relative_to(root))
        by_key.setdefault((rel, int(e["line"]), text_sha(e["text"])), []).append(e)

    problems: list[str] = []
    real = []  # genuine real endings with the replay's verdict
    for t in read_csv("intent_labels.csv"):
        hits = [e for e in by_key.get((t["file"], int(t["line"]), t["text_sha"]), []) if e["n_tool_calls"] == 0]
        if len(hits) != 1:
            problems.append(f"labelled reply not found once: {t['file']}:{t['line']} {t['text_sha']} ({len(hits)})")
            continue
        real.append({**t, **verdict[hits[0]["event_id"]]})
    labelled = {(t["file"], int(t["line"]), t["text_sha"]) for t in read_csv("intent_labels.csv")}
    for key, evs in by_key.items():  # every text-only reply of the corpus must carry a label
        for e in evs:
            if e["n_tool_calls"] == 0 and strip(e["text"]) and key not in labelled:
                problems.append(f"unlabelled text-only reply: {key[0]}:{key[1]} {key[2]}")

    positives = []  # (origin, harness/language, text)
    for p in read_csv("intent_positives_real.csv"):
        if p["label"] != "plan":
            continue
        hits = [e for e in by_key.get((p["file"], int(p["line"]), p["text_sha"]), []) if e["n_tool_calls"] > 0]
        if len(hits) != 1:
            problems.append(f"positive narration not found once: {p['file']}:{p['line']} {p['text_sha']}")
            continue
        positives.append(
            {"id": f"{p['file']}:{p['line']}", "group": p["harness"], "sample": p["sample"], "text": hits[0]["text"]}
        )
    cases = read_csv("intent_cases.csv")
    for c in cases:
        c["text"] = c["text"].replace("\\n", "\n")
    con.close()

    con = connect(":memory:")
    synth = positives + [{"id": c["id"], "group": c["language"], "text": c["text"], "case": c} for c in cases]
    _synthetic(con, [s["text"] for s in synth])
    replay_stalls(con, segmentation="fallback")
    v = _verdicts(con)
    for i, s in enumerate(synth):
        s.update(v[f"p{i}-4"])
    con.close()

    def flagged(r: dict) -> bool:
        return r["round_kind"] == "narrated_intent"

    plan = [s for s in synth if "case" not in s or s["case"]["label"] == "plan"]
    handoff = [s for s in synth if "case" in s and s["case"]["label"] == "handoff"]
    fp_real = [r for r in real if flagged(r)]
    fp_silent_real = [r for r in real if r["silent"]]
    fp_cases = [s for s in handoff if flagged(s)]
    tp = [s for s in plan if flagged(s)]
    genuine = len(real) + len(handoff)
    fp = len(fp_real) + len(fp_cases)
    per_group: dict[str, list[int]] = {}
    for s in plan:
        g = per_group.setdefault(s["group"], [0, 0])
        g[0] += 1
        g[1] += flagged(s)
    by_sample: dict[str, list[int]] = {}
    for s in plan:
        g = by_sample.setdefault(s.get("sample", "handwritten"), [0, 0])
        g[0] += 1
        g[1] += flagged(s)
    real_by_harness: dict[str, list[int]] = {}
    for r in real:
        g = real_by_harness.setdefault(r["harness"], [0, 0])
        g[0] += 1
        g[1] += flagged(r)
    return {
        "data_version": info.data_version,
        "problems": problems,
        "real_genuine": len(real),
        "real_plan_as_answer": 0,
        "real_by_harness": real_by_harness,
        "false_alarms_real": len(fp_real),
        "silent_false_alarms_real": len(fp_silent_real),
        "false_alarm_ids": [f"{r['file']}:{r['line']} {r['signature']}" for r in fp_real]
        + [f"case {s['id']} {s['signature']}" for s in fp_cases],
        "handoff_cases": len(handoff),
        "false_alarms_cases": len(fp_cases),
        "positives": len(plan),
        "positives_real": len(positives),
        "detected": len(tp),
        "detected_silent": sum(1 for s in plan if s["silent"]),
        "recall_by_group": per_group,
        "recall_by_sample": by_sample,
        "missed": [s["id"] for s in plan if not flagged(s)],
        "precision": len(tp) / (len(tp) + fp) if tp or fp else None,
        "recall": len(tp) / len(plan) if plan else None,
        "false_alarms_per_1000_real": 1000 * len(fp_real) / len(real) if real else None,
        "false_alarm_upper95_per_1000_real": 1000 * _upper95(len(fp_real), len(real)) if real else None,
        "false_alarms_per_1000_genuine": 1000 * fp / genuine if genuine else None,
    }


def toml_text(m: dict) -> str:
    def f(x, nd=4):
        return "nan" if x is None else repr(round(x, nd))

    return (
        "# Measured precision of the narrated-intent rule (narrated_intent / silent_plan_as_answer) on the\n"
        "# hand-labelled truth set in tests/truth/. Written by `python tests/real/intent_truth.py --write`;\n"
        "# tests/real/test_real_intent_precision.py fails when a new measurement falls below these figures.\n"
        "# The report prints them next to its stall counts. Do not edit by hand.\n"
        f'measured_on = "{datetime.now(UTC).date().isoformat()}"\n'
        f'data_version = "{m["data_version"]}"\n'
        'truth_set = "tests/truth/intent_labels.csv, intent_positives_real.csv, intent_cases.csv"\n'
        "# real text-only endings read by hand (Claude Code, Codex, Hermes, Cline) and how many were plan-as-answer\n"
        f"real_genuine = {m['real_genuine']}\n"
        f"real_plan_as_answer = {m['real_plan_as_answer']}\n"
        "# of those genuine endings: flagged narrated_intent, flagged silent_plan_as_answer, one-sided 95 % bound\n"
        f"false_alarms_real = {m['false_alarms_real']}\n"
        f"silent_false_alarms_real = {m['silent_false_alarms_real']}\n"
        f"false_alarm_upper95_per_1000 = {f(m['false_alarm_upper95_per_1000_real'], 1)}\n"
        "# hand-written hand-offs and waits (en / zh / ja / ko) and how many were flagged\n"
        f"handoff_cases = {m['handoff_cases']}\n"
        f"false_alarms_cases = {m['false_alarms_cases']}\n"
        "# plan-as-answer shapes (real narrations with their call removed + hand-written) and how many were flagged\n"
        f"positives = {m['positives']}\n"
        f"detected = {m['detected']}\n"
        "# of the real narrations: the held-out sample (read after the intent signatures were last tuned)\n"
        f"heldout_positives = {m['recall_by_sample'].get('heldout', [0, 0])[0]}\n"
        f"heldout_detected = {m['recall_by_sample'].get('heldout', [0, 0])[1]}\n"
        "# detected / (detected + every false alarm above), and detected / positives\n"
        f"precision = {f(m['precision'])}\n"
        f"recall = {f(m['recall'])}\n"
    )


def main(argv: list[str]) -> int:
    m = measure()
    print(f"data {m['data_version']}")
    for p in m["problems"]:
        print("PROBLEM", p)
    print(f"real genuine endings: {m['real_genuine']} ({m['real_by_harness']}); real plan-as-answer: 0")
    print(
        f"false alarms on real genuine: {m['false_alarms_real']} narrated_intent, "
        f"{m['silent_false_alarms_real']} silent_plan_as_answer "
        f"({m['false_alarms_per_1000_real']:.1f}/1,000; 95 % upper bound "
        f"{m['false_alarm_upper95_per_1000_real']:.1f}/1,000)"
    )
    print(f"hand-written hand-offs: {m['handoff_cases']}, flagged {m['false_alarms_cases']}")
    print(
        f"positives: {m['positives']} ({m['positives_real']} real narrations), detected {m['detected']} "
        f"(silent {m['detected_silent']}); recall by group {m['recall_by_group']}, "
        f"by sample {m['recall_by_sample']}"
    )
    print(f"precision {m['precision']:.4f}  recall {m['recall']:.4f}")
    print("false alarms:", *m["false_alarm_ids"], sep="\n  ")
    if "-v" in argv:
        print("missed:", *m["missed"], sep="\n  ")
    if "--write" in argv:
        PRECISION_TOML.write_text(toml_text(m), encoding="utf-8")
        print(f"wrote {PRECISION_TOML.relative_to(REPO)}")
    return 1 if m["problems"] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
