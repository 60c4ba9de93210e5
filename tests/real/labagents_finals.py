"""List the turn-final reply of every LabAgents run, for reading by hand (it never decides a label).

Each file in ../shared/data/labagents/<tier>/<model>/<run>.jsonl is one run of a plain chat-completions loop:
one user question, then assistant rows (with tool calls) and tool rows, and the run's `final_answer` as the last
assistant row (or, when the harness failed, a last `system` row with `labagents_harness_error`). This prints, per
run, the key used in tests/truth/labagents_labels.csv (file, 1-based line, text_sha as in intent_truth.py), the
model, how many tool calls ran before the final reply, the names of the last few tools, and the reply's text
(head and tail when long), so a reader can label it in context.

    python tests/real/labagents_finals.py                 # every run
    python tests/real/labagents_finals.py --csv           # key columns only (file,line,text_sha,model,...)
    python tests/real/labagents_finals.py --check         # the labels file covers every run with the same keys
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from tests.real.intent_truth import REPO, text_sha

LABELS = REPO / "tests" / "truth" / "labagents_labels.csv"


def data_root() -> Path:
    return (REPO.parent / "shared" / "data" / "labagents").resolve()


def finals(root: Path) -> list[dict]:
    """One dict per run: its last row (assistant final answer or harness error) and some context before it."""
    out = []
    for path in sorted(root.glob("tier*/*/*.jsonl")):
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
        last = len(rows)
        final = rows[-1]
        tools = [r.get("name") for r in rows[:-1] if r.get("role") == "tool"]
        texts = [r for r in rows[:-1] if r.get("role") == "assistant" and (r.get("content") or "").strip()]
        out.append(
            {
                "file": str(path.relative_to(root)),
                "line": last,
                "role": final.get("role"),
                "harness_error": bool(final.get("labagents_harness_error")),
                "text": final.get("content") or "",
                "text_sha": text_sha(final.get("content")),
                "model": final.get("model") or next((r["model"] for r in rows if r.get("model")), ""),
                "n_tool_calls": sum(len(r.get("tool_calls") or []) for r in rows),
                "last_tools": tools[-4:],
                "prev_text": (texts[-1].get("content") or "").strip() if texts else "",
            }
        )
    by_dir = {Path(f["file"]).parent: f["model"] for f in out if f["model"]}
    for f in out:  # a run that failed before any reply has no model field: take its folder's
        f["model"] = f["model"] or by_dir.get(Path(f["file"]).parent, "")
    return out


def _show(f: dict, width: int) -> str:
    text = f["text"].strip()
    body = text if len(text) <= 2 * width else text[:width] + "\n  [...]\n" + text[-width:]
    prev = f["prev_text"][-300:]
    return (
        f"=== {f['file']}:{f['line']} sha={f['text_sha']} model={f['model']} role={f['role']}"
        f"{' HARNESS_ERROR' if f['harness_error'] else ''} tools={f['n_tool_calls']} last={f['last_tools']}\n"
        f"  prev narration tail: {prev!r}\n{body}\n"
    )


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--csv", action="store_true")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--width", type=int, default=700)
    ap.add_argument("--grep", default="", help="only runs whose file path contains this")
    a = ap.parse_args()
    root = data_root()
    if not root.is_dir():
        print(f"no LabAgents data at {root}", file=sys.stderr)
        return 2
    rows = [f for f in finals(root) if a.grep in f["file"]]
    if a.check:
        with open(LABELS, encoding="utf-8", newline="") as fh:
            labelled = {(r["file"], int(r["line"]), r["text_sha"]) for r in csv.DictReader(fh)}
        want = {(f["file"], f["line"], f["text_sha"]) for f in rows}
        for k in sorted(want - labelled):
            print("unlabelled:", *k)
        for k in sorted(labelled - want):
            print("stale label:", *k)
        return 1 if want != labelled else 0
    if a.csv:
        w = csv.writer(sys.stdout)
        w.writerow(["file", "line", "text_sha", "model", "n_tool_calls", "chars"])
        for f in rows:
            w.writerow([f["file"], f["line"], f["text_sha"], f["model"], f["n_tool_calls"], len(f["text"])])
        return 0
    for f in rows:
        print(_show(f, a.width))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
