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
                             pass, and plan shapes with the source of each shape; `setting` says what comes
                             before the reply (tests/truth_sessions.py), `class` the issue-25 class.
  labagents_labels.csv       every turn-final reply of the 198 LabAgents eval-run logs (../shared/data/labagents,
                             a chat-completions loop that nothing wakes), read by hand: plan / wait (stalls),
                             genuine / question (not), empty / error (left out), with the class of each stall.
                             labagents_labels_second_reader.csv is a second, independent reading of the same
                             replies (kept for the agreement figure in tests/truth/README.md; not read here).

Classes (docs/rules.md): narration = an announcement after a tool round (issue 15); 1 = a plan as the turn's
first reply; 2 = present-tense / progressive announcement; 3 = a promise after a done statement; 4 = a wait or
report-back promise with no background work; 5 = the announcement in the last sentence, not at its start;
6 = finish reason tool_calls with neither a call nor text. Recall per class counts the labelled stalls the
replay flags; precision per class counts, among the replay's flags it attributes to that class (detected_class),
those on labelled stalls.

The real files are never copied: positives are read from them at run time by their key. Each text is replayed
as the last round of a turn after one tool round (finish reason `stop`, no call), the case narrated_intent
exists for; real endings are replayed in place with the turn-boundary truth.

Run `python tests/real/intent_truth.py` to print the figures, `--write` to store them in
stallscan/data/precision.toml (the report prints them next to its stall counts).
"""

from __future__ import annotations

import csv
import hashlib
import os
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TRUTH = REPO / "tests" / "truth"
PRECISION_TOML = REPO / "stallscan" / "data" / "precision.toml"
REAL_DIRS = ("claude-code", "codex", "hermes-session", "hermes-trajectory", "cline")
LABAGENTS_TZ = "America/Los_Angeles"  # labagents/PROVENANCE.md: naive US Pacific times
CLASSES = ("narration", "1", "2", "3", "4", "5", "6")
DONE_RE = re.compile(r"(?i)\b(done|all set|completed|finished|successfully|submitted)\b")
STALL_KINDS = ("narrated_intent", "dropped_tool_call", "no_tool")
if str(REPO) not in sys.path:  # run as a script: tests.truth_sessions, tests.real.intent_truth_out
    sys.path.insert(0, str(REPO))


from tests.real.intent_truth_out import class_lines, toml_text  # noqa: E402  (re-exported for the test)

__all__ = ["PRECISION_TOML", "class_lines", "measure", "text_sha", "toml_text"]


def real_root() -> Path:
    env = os.environ.get("STALLSCAN_REAL_DATA")
    return (Path(env) if env else REPO.parent / "shared" / "data" / "real").resolve()


def labagents_root() -> Path:
    env = os.environ.get("STALLSCAN_LABAGENTS_DATA")
    return (Path(env) if env else real_root().parent / "labagents").resolve()


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


def _verdicts(con) -> dict[str, dict]:
    """event_id -> round_kind, signature, hits, evidence, and whether the replay calls the turn a silent ending."""
    return {
        r["event_id"]: r
        for r in _rows(
            con,
            "SELECT r.event_id, r.round_kind, r.signature, r.sig_hits, r.veto_hits, r.wait_hits, r.background, "
            "r.approval_mode, r.after_tool_round, r.text_chars, "
            "coalesce(t.outcome = 'silent_plan_as_answer', false) AS silent "
            "FROM rounds r LEFT JOIN turns t ON t.delivered_event_id = r.event_id",
        )
    }


def flagged(v: dict) -> bool:
    """The detector's own call: a stall found from the reply (not a harness nudge's verdict, `nudge:<id>`)."""
    return v["round_kind"] in STALL_KINDS and not (v["signature"] or "").startswith("nudge:")


def detected_class(v: dict, class_of_sig: dict[str, str | None], done_ids: set[str]) -> str | None:
    """The class the replay's flag falls in, read from its evidence (None when not flagged)."""
    if not flagged(v):
        return None
    if v["round_kind"] == "dropped_tool_call" and not v["text_chars"]:
        return "6"
    sig = v["signature"] or ""
    if class_of_sig.get(sig):
        return class_of_sig[sig]
    if v["round_kind"] == "narrated_intent" and not v["after_tool_round"]:
        return "1"
    if v["wait_hits"]:
        return "4"
    if done_ids & set(v.get("done_anywhere") or []):
        return "3"
    return "narration"


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


def _read_labagents() -> list[dict]:
    """The LabAgents labels (labagents_labels.csv)."""
    rows: dict[tuple, dict] = {}
    for name in ("labagents_labels.csv",):
        if (TRUTH / name).is_file():
            for r in read_csv(name):
                rows[(r["file"], int(r["line"]), r["text_sha"])] = {**r, "source_csv": name}
    return list(rows.values())


def _shape_cases() -> list[dict]:
    """shape_cases.csv (truth-labels branch), when present: hand-written endings in the shapes of the real
    positives; `shape` c<N>_... names the class, other:... its own; class 1 is the turn's first reply."""
    if not (TRUTH / "shape_cases.csv").is_file():
        return []
    out = []
    for c in read_csv("shape_cases.csv"):
        cls = c["shape"][1] if c["shape"][:1] == "c" and c["shape"][1:2].isdigit() else c["shape"]
        setting = "first_reply" if cls == "1" else "after_tool"
        out.append({**c, "class": cls if c["label"] == "plan" else "", "setting": setting, "group": "shape_cases"})
    return out


def _public_positives() -> list[dict]:
    """public_positives.csv (truth-labels branch), when present: real endings found in public threads, each
    replayed as its invented sentence of the same shape in the setting its class needs."""
    if not (TRUTH / "public_positives.csv").is_file():
        return []
    out = []
    for i, p in enumerate(read_csv("public_positives.csv")):
        text = p["shape"].replace("\\n", "\n")
        no_text = text.startswith("(no text")
        if p["class"] in ("6", "other:dropped_call_with_text"):
            setting = "finish_tool_calls"
        else:
            setting = "first_reply" if p["class"] == "1" else "after_tool"
        out.append(
            {"id": f"public:{p['repo']} {p['path_or_issue']}#{i}", "group": "public", "class": p["class"],
             "setting": setting, "text": "" if no_text else text}
        )  # fmt: skip
    return out


def _keyed_events(con, root: Path) -> dict[tuple, list[dict]]:
    events = _rows(
        con,
        "SELECT e.event_id, e.file, e.line, e.text, e.n_tool_calls, e.source_format FROM events e "
        "WHERE e.role = 'assistant'",
    )
    by_key: dict[tuple, list[dict]] = {}
    for e in events:
        rel = str(Path(e["file"]).resolve().relative_to(root))
        by_key.setdefault((rel, int(e["line"]), text_sha(e["text"])), []).append(e)
    return by_key


def _class_table(items: list[dict], flags: list[dict]) -> dict[str, dict]:
    """Per class: labelled stalls, how many flagged, and the replay's flags attributed to the class that were
    not labelled stalls (false alarms)."""
    out: dict[str, dict] = {}
    for c in CLASSES + tuple(sorted({i["class"] for i in items} - set(CLASSES))):
        pos = [i for i in items if i["class"] == c]
        det = sum(1 for i in pos if flagged(i))
        fa = sum(1 for f in flags if f["detected_class"] == c)
        out[c] = {
            "positives": len(pos),
            "detected": det,
            "false_alarms": fa,
            "recall": det / len(pos) if pos else None,
            "precision": det / (det + fa) if det + fa else None,
        }
    return out


def measure(root: Path | None = None) -> dict:
    """Replay the truth set and count. Raises FileNotFoundError when the real data is absent."""
    from stallscan.ingest.run import ingest_paths
    from stallscan.replay.stall_rules import load
    from stallscan.replay.stalls import replay_stalls
    from stallscan.store.db import connect
    from tests.truth_sessions import insert

    class_of_sig = {s.id: s.cls for s in load().signatures}

    def annotate(v: dict, text: str | None) -> dict:
        # class 3 evidence: a finished-state word in the reply's last line (where the old done veto looked)
        last = strip(text).split("\n")[-1]
        v = {**v, "done_anywhere": ["done"] if DONE_RE.search(last) else []}
        return {**v, "detected_class": detected_class(v, class_of_sig, {"done"})}

    root = root or real_root()
    dirs = [root / d for d in REAL_DIRS]
    missing = [str(d) for d in dirs if not d.is_dir()]
    if missing:
        raise FileNotFoundError(f"real transcripts not found: {', '.join(missing)} (set STALLSCAN_REAL_DATA)")

    con = connect(":memory:")
    ingest_paths(con, [str(d) for d in dirs], fmt="auto")
    info = replay_stalls(con)
    verdict = _verdicts(con)
    by_key = _keyed_events(con, root)

    problems: list[str] = []
    real = []  # genuine real endings with the replay's verdict
    for t in read_csv("intent_labels.csv"):
        hits = [e for e in by_key.get((t["file"], int(t["line"]), t["text_sha"]), []) if e["n_tool_calls"] == 0]
        if len(hits) != 1:
            problems.append(f"labelled reply not found once: {t['file']}:{t['line']} {t['text_sha']} ({len(hits)})")
            continue
        real.append({**t, **annotate(verdict[hits[0]["event_id"]], hits[0]["text"])})
    labelled = {(t["file"], int(t["line"]), t["text_sha"]) for t in read_csv("intent_labels.csv")}
    for key, evs in by_key.items():  # every text-only reply of the corpus must carry a label
        for e in evs:
            if e["n_tool_calls"] == 0 and strip(e["text"]) and key not in labelled:
                problems.append(f"unlabelled text-only reply: {key[0]}:{key[1]} {key[2]}")

    positives = []  # real narrations replayed with their call removed
    for p in read_csv("intent_positives_real.csv"):
        if p["label"] != "plan":
            continue
        hits = [e for e in by_key.get((p["file"], int(p["line"]), p["text_sha"]), []) if e["n_tool_calls"] > 0]
        if len(hits) != 1:
            problems.append(f"positive narration not found once: {p['file']}:{p['line']} {p['text_sha']}")
            continue
        positives.append(
            {"id": f"{p['file']}:{p['line']}", "group": p["harness"], "sample": p["sample"], "text": hits[0]["text"],
             "setting": "after_tool", "class": p.get("class") or "narration"}
        )  # fmt: skip
    con.close()

    # LabAgents: real endings of a loop that nothing wakes, replayed in place
    la_root = labagents_root()
    la_rows = _read_labagents()
    labagents: list[dict] = []
    la_note = None
    if not la_root.is_dir():
        la_note = f"LabAgents logs not found at {la_root} (set STALLSCAN_LABAGENTS_DATA): their labels not measured"
    elif la_rows:
        con = connect(":memory:")
        ingest_paths(con, [str(la_root)], fmt="auto", naive_tz=LABAGENTS_TZ)
        replay_stalls(con)
        lv = _verdicts(con)
        lk = _keyed_events(con, la_root)
        for t in la_rows:
            if t["label"] not in ("plan", "wait", "genuine", "question"):
                continue  # empty / error rows: no model text to judge
            hits = lk.get((t["file"], int(t["line"]), t["text_sha"]), [])
            if len(hits) != 1:
                problems.append(f"labagents reply not found once: {t['file']}:{t['line']} {t['text_sha']}")
                continue
            labagents.append({**t, **annotate(lv[hits[0]["event_id"]], hits[0]["text"])})
        con.close()

    cases = read_csv("intent_cases.csv") + _shape_cases()
    for c in cases:
        c["text"] = c["text"].replace("\\n", "\n")
    con = connect(":memory:")
    synth = positives + [
        {"id": c["id"], "group": c.get("group") or c["language"], "text": c["text"], "case": c,
         "setting": c["setting"], "class": c["class"] if c["label"] == "plan" else ""}
        for c in cases
    ] + _public_positives()  # fmt: skip
    reply = insert(con, [(f"s{i}", s["text"], s["setting"]) for i, s in enumerate(synth)])
    replay_stalls(con, segmentation="fallback")
    v = _verdicts(con)
    for i, s in enumerate(synth):
        s.update(annotate(v[reply[f"s{i}"]], s["text"]))
    con.close()

    public = [s for s in synth if s.get("group") == "public"]
    synth = [s for s in synth if s.get("group") != "public"]
    plan = [s for s in synth if "case" not in s or s["case"]["label"] == "plan"]
    handoff = [s for s in synth if "case" in s and s["case"]["label"] != "plan"]
    la_pos = [r for r in labagents if r["label"] in ("plan", "wait")]
    la_neg = [r for r in labagents if r["label"] in ("genuine", "question")]
    fp_real = [r for r in real if flagged(r)]
    fp_silent_real = [r for r in real if r["silent"]]
    fp_la = [r for r in la_neg if flagged(r)]
    fp_cases = [s for s in handoff if flagged(s)]
    tp = [s for s in plan if flagged(s)]
    la_tp = [r for r in la_pos if flagged(r)]
    genuine = len(real) + len(handoff)
    fp = len(fp_real) + len(fp_cases)
    real_genuine_all = len(real) + len(la_neg)
    real_fp_all = len(fp_real) + len(fp_la)
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
    la_by_model: dict[str, list[int]] = {}
    for r in la_pos:
        g = la_by_model.setdefault(r["model"], [0, 0])
        g[0] += 1
        g[1] += flagged(r)
    return {
        "data_version": info.data_version,
        "problems": problems,
        "notes": [la_note] if la_note else [],
        "real_genuine": len(real),
        "real_plan_as_answer": len(la_pos),
        "real_by_harness": real_by_harness,
        "false_alarms_real": len(fp_real),
        "silent_false_alarms_real": len(fp_silent_real),
        "false_alarm_ids": [f"{r['file']}:{r['line']} {r['signature']}" for r in fp_real]
        + [f"labagents {r['file']}:{r['line']} {r['signature']}" for r in fp_la]
        + [f"case {s['id']} {s['signature']}" for s in fp_cases],
        "handoff_cases": len(handoff),
        "false_alarms_cases": len(fp_cases),
        "positives": len(plan),
        "positives_real": len(positives),
        "detected": len(tp),
        "detected_silent": sum(1 for s in plan if s["silent"]),
        "recall_by_group": per_group,
        "recall_by_sample": by_sample,
        "missed": [s["id"] for s in plan if not flagged(s)]
        + [f"labagents {r['file']}:{r['line']} class {r['class']}" for r in la_pos if not flagged(r)],
        "precision": len(tp) / (len(tp) + fp) if tp or fp else None,
        "recall": len(tp) / len(plan) if plan else None,
        "false_alarms_per_1000_real": 1000 * len(fp_real) / len(real) if real else None,
        "false_alarm_upper95_per_1000_real": 1000 * _upper95(len(fp_real), len(real)) if real else None,
        "false_alarms_per_1000_genuine": 1000 * fp / genuine if genuine else None,
        # LabAgents (real plan-as-answer endings and genuine finals of one loop)
        "labagents_labels": len(labagents),
        "labagents_positives": len(la_pos),
        "labagents_detected": len(la_tp),
        "labagents_genuine": len(la_neg),
        "labagents_false_alarms": len(fp_la),
        "labagents_by_model": la_by_model,
        # every real ending read by hand: genuine ones (both sets) and real stalls (LabAgents)
        "real_genuine_all": real_genuine_all,
        "false_alarms_real_all": real_fp_all,
        "false_alarm_upper95_per_1000_real_all": 1000 * _upper95(real_fp_all, real_genuine_all)
        if real_genuine_all
        else None,
        "real_recall": len(la_tp) / len(la_pos) if la_pos else None,
        "real_precision": len(la_tp) / (len(la_tp) + real_fp_all) if la_tp or real_fp_all else None,
        "classes_real": _class_table(la_pos, [r for r in real + la_neg if flagged(r)]),
        "classes_shapes": _class_table(plan, fp_cases),
        "classes_public": _class_table(public, []) if public else None,
        "public_positives": len(public),
        "public_detected": sum(1 for s in public if flagged(s)),
        "truth_files": sorted(
            {r["source_csv"] for r in labagents}
            | {f for f in ("shape_cases.csv", "public_positives.csv") if (TRUTH / f).is_file()}
        ),
    }


def main(argv: list[str]) -> int:
    m = measure()
    print(f"data {m['data_version']}")
    for p in m["problems"]:
        print("PROBLEM", p)
    for n in m["notes"]:
        print("NOTE", n)
    print(f"real genuine endings: {m['real_genuine']} ({m['real_by_harness']}) + LabAgents {m['labagents_genuine']}")
    print(
        f"false alarms on real genuine: {m['false_alarms_real']} stalls, "
        f"{m['silent_false_alarms_real']} silent_plan_as_answer "
        f"({m['false_alarms_per_1000_real']:.1f}/1,000; 95 % upper bound "
        f"{m['false_alarm_upper95_per_1000_real']:.1f}/1,000); LabAgents {m['labagents_false_alarms']}; all real "
        f"{m['false_alarms_real_all']} in {m['real_genuine_all']} "
        f"(95 % bound {m['false_alarm_upper95_per_1000_real_all']:.1f}/1,000)"
    )
    print(
        f"real plan-as-answer endings (LabAgents): {m['labagents_positives']}, detected {m['labagents_detected']} "
        f"by model {m['labagents_by_model']}"
    )
    print(f"hand-written hand-offs: {m['handoff_cases']}, flagged {m['false_alarms_cases']}")
    print(
        f"shapes: {m['positives']} ({m['positives_real']} real narrations), detected {m['detected']} "
        f"(silent {m['detected_silent']}); by group {m['recall_by_group']}, by sample {m['recall_by_sample']}"
    )
    print(*class_lines(m), sep="\n")
    print("false alarms:", *m["false_alarm_ids"], sep="\n  ")
    if "-v" in argv:
        print("missed:", *m["missed"], sep="\n  ")
    if "--write" in argv:
        PRECISION_TOML.write_text(toml_text(m), encoding="utf-8")
        print(f"wrote {PRECISION_TOML.relative_to(REPO)}")
    return 1 if m["problems"] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
