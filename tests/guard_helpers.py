"""Guard-test helpers: a scripted Claude Code session and the hook run as the harness runs it, and the
agreement of the guard's verdicts with the replay (shared by test_guard_hook, test_guard_log,
test_guard_agreement and test_guard_property)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

from stallscan.guard import hook
from stallscan.guard.judge import judge, nudge_text
from stallscan.ingest.run import ingest_paths
from stallscan.replay.stall_rules import load
from stallscan.replay.stalls import replay_stalls
from stallscan.store.db import connect
from tests.helpers import ROOT, memory_copy

NUDGE = nudge_text()
BIN = Path(sys.executable).parent


def _now() -> str:
    """Wall-clock time, as the harness writes it (the guard log's times are wall-clock too)."""
    time.sleep(0.003)
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class ClaudeSession:
    def __init__(self, path: Path):
        self.path, self.n = path, 0
        path.write_text("", encoding="utf-8")

    def _rec(self, typ, message, **extra):
        self.n += 1
        rec = {
            "type": typ,
            "uuid": f"u{self.n}",
            "parentUuid": None,
            "sessionId": "sess-1",
            "isSidechain": False,
            "timestamp": _now(),
            "message": message,
            **extra,
        }
        with open(self.path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(rec) + "\n")

    def human(self, text):
        self._rec("user", {"role": "user", "content": text})

    def tool_round(self, text=None):
        k = self.n
        content = ([{"type": "text", "text": text}] if text else []) + [
            {"type": "tool_use", "id": f"tu{k}", "name": "Bash", "input": {"command": "pytest"}}
        ]
        self._rec(
            "assistant",
            {
                "id": f"m{k}",
                "role": "assistant",
                "model": "claude-opus-4-6",
                "stop_reason": "tool_use",
                "content": content,
            },
        )
        self._rec(
            "user", {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"tu{k}", "content": "ok"}]}
        )

    def reply(self, text):
        self._rec(
            "assistant",
            {
                "id": f"m{self.n}",
                "role": "assistant",
                "model": "claude-opus-4-6",
                "stop_reason": "end_turn",
                "content": [{"type": "text", "text": text}],
            },
        )

    def feedback(self, reason):
        self._rec(
            "user",
            {"role": "user", "content": f"Stop hook feedback:\n[python -m stallscan.guard]: {reason}"},
            isMeta=True,
        )

    def stop(self, text, **extra):
        return {
            "session_id": "sess-1",
            "transcript_path": str(self.path),
            "cwd": str(self.path.parent),
            "permission_mode": "default",
            "hook_event_name": "Stop",
            "stop_hook_active": False,
            "last_assistant_message": text,
            **extra,
        }


def run_hook(payload, log: Path, *args, raw: str | None = None, cmd=None):
    stdin = raw if raw is not None else json.dumps(payload)
    cmd = cmd or [sys.executable, "-m", "stallscan.guard"]
    # the budget counts from process start: a start-up slowed by a loaded machine must not turn a block into
    # an allow here (tests that are about the budget pass their own --budget-ms, which comes later and wins)
    p = subprocess.run(
        [*cmd, "--log", str(log), "--budget-ms", "60000", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=90,
    )
    recs = [json.loads(ln) for ln in log.read_text(encoding="utf-8").splitlines()] if log.exists() else []
    return p, recs[-1] if recs else None


SAMPLES = ROOT / "sample_logs"
HOOKED = ("claude_code", "codex")


def _real_root() -> Path:

    env = os.environ.get("STALLSCAN_REAL_DATA")
    return (Path(env) if env else ROOT.parent / "shared" / "data" / "real").resolve()


def _rows(con, q, params=None):
    cur = con.execute(q, params or [])
    cols = [d[0] for d in cur.description]
    return [dict(zip(cols, r)) for r in cur.fetchall()]


def _after_evidence(r: dict, data) -> bool:
    if r["interrupted"]:
        return True
    if r["nudge_id"] is None:
        return False
    reacts = {p.id: p.reacts_to for p in data.prompts}
    return reacts.get(r["nudge_id"]) in ("narrated", "no_tool", "dropped")


def agreement(
    roots: list[Path], tmp: Path, every_text_round: bool = False, ingested: Path | None = None
) -> dict[str, Counter]:
    """{file: Counter(agree=, disagree=, after=, skipped_tool_round=)} plus the disagreements under key '_bad'.
    every_text_round: judge every text-only reply (each place a turn could have ended), not only turn ends.
    ingested: a closed database holding `roots` ingested (ingest_paths, format auto), copied instead of
    ingesting them again."""
    data = load()
    if ingested is None:
        con = connect(":memory:")
        ingest_paths(con, [str(r) for r in roots], fmt="auto")
    else:
        con = memory_copy(ingested)
    replay_stalls(con, segmentation="fallback")
    src = (
        "(SELECT event_id FROM rounds WHERE n_tool_calls = 0)"
        if every_text_round
        else "(SELECT delivered_event_id AS event_id FROM turns)"
    )
    finals = _rows(
        con,
        "SELECT r.*, e.file, e.line, e.last_line, e.text, e.seq AS eseq, e.source_format AS fmt FROM "
        f"{src} t JOIN rounds r USING (event_id) JOIN events e USING (event_id) ORDER BY e.file, e.line",
    )
    out: dict[str, Counter] = {}
    bad: list[str] = []
    lines_of: dict[str, list[bytes]] = {}
    for r in finals:
        c = out.setdefault(r["file"], Counter())
        if r["n_tool_calls"] > 0:
            c["skipped_tool_round"] += 1  # the turn ends on a tool call in the file: no Stop hook there
            continue
        if _after_evidence(r, data):
            c["after"] += 1
            continue
        if r["fmt"] in HOOKED:
            if r["file"] not in lines_of:
                lines_of[r["file"]] = Path(r["file"]).read_bytes().split(b"\n")
            cut = tmp / "transcript.jsonl"
            cut.write_bytes(b"\n".join(lines_of[r["file"]][: r["last_line"]]) + b"\n")
            payload = {
                "hook_event_name": "Stop",
                "session_id": r["session_id"],
                "transcript_path": str(cut),
                "cwd": str(tmp),
                "stop_hook_active": False,
                "last_assistant_message": r["text"],
            }
            rec: dict = {}
            try:
                hook.decide(payload, dict(hook.DEFAULTS), rec)
            except hook.Allow as exc:
                rec["verdict"] = f"allow: {exc}"
            got = rec.get("verdict")
            c["via_hook"] += 1
        else:
            evs = _rows(
                con,
                "SELECT * FROM events WHERE session_id = ? AND seq <= ? ORDER BY seq, event_id",
                [r["session_id"], r["eseq"]],
            )
            v = judge(evs, r["text"], 3, data)
            got = v.round_kind if v else None
            c["via_judge"] += 1
        if got == r["round_kind"]:
            c["agree"] += 1
            c[f"kind:{got}"] += 1
        else:
            c["disagree"] += 1
            bad.append(f"{r['file']}:{r['line']}: guard {got!r} != replay {r['round_kind']!r}")
    con.close()
    out["_bad"] = Counter(bad)
    return out


def _report(res: dict[str, Counter], base: Path) -> None:
    print()
    for f, c in sorted(res.items()):
        if f == "_bad":
            continue
        kinds = ", ".join(f"{k[5:]} {n}" for k, n in sorted(c.items()) if k.startswith("kind:"))
        rel = Path(f).relative_to(base) if Path(f).is_relative_to(base) else f
        print(
            f"{rel}: agree {c['agree']} disagree {c['disagree']} after-evidence {c['after']} "
            f"tool-round-end {c['skipped_tool_round']} ({kinds})"
        )
