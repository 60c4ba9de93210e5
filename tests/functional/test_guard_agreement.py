"""The guard and the replay agree: on every real file and on sample_logs, the guard's verdict on each turn's
final reply equals the replay's round_kind for that reply.

Claude Code and Codex files go through the whole hook path: the transcript cut after the reply's last line
(what the file holds when the Stop hook runs), plus the hook JSON with `last_assistant_message` = the
reply's text; the guard reads the tail itself. Files of other formats (no Stop hook there) feed the guard's
judge the session's events up to the reply with the same text. The replay runs with the fallback turn
segmentation, the one the guard can compute from a tail (the origin labels need the whole file in SQL).

Replies whose round_kind the replay decided from what came AFTER them (a harness nudge or an interrupt
marker following the reply) cannot be known at stop time; they are counted apart, not compared.
`pytest -s tests/functional/test_guard_agreement.py` prints the counts per file.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from stallscan.guard import hook
from stallscan.guard.judge import judge
from stallscan.ingest.run import ingest_paths
from stallscan.replay.stall_rules import load
from stallscan.replay.stalls import replay_stalls
from stallscan.store.db import connect
from tests.helpers import ROOT

SAMPLES = ROOT / "sample_logs"
HOOKED = ("claude_code", "codex")


def _real_root() -> Path:
    import os

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


def agreement(roots: list[Path], tmp: Path, every_text_round: bool = False) -> dict[str, Counter]:
    """{file: Counter(agree=, disagree=, after=, skipped_tool_round=)} plus the disagreements under key '_bad'.
    every_text_round: judge every text-only reply (each place a turn could have ended), not only turn ends."""
    data = load()
    con = connect(":memory:")
    ingest_paths(con, [str(r) for r in roots], fmt="auto")
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


@pytest.mark.parametrize("every", [False, True], ids=["turn_ends", "every_text_round"])
def test_guard_agrees_with_replay_on_sample_logs(tmp_path, every):
    res = agreement([SAMPLES], tmp_path, every)
    _report(res, SAMPLES)
    assert not res["_bad"], sorted(res["_bad"])[:20]
    assert sum(c["agree"] for f, c in res.items() if f != "_bad") > 0


@pytest.mark.parametrize("every", [False, True], ids=["turn_ends", "every_text_round"])
def test_guard_agrees_with_replay_on_every_real_file(tmp_path, every):
    root = _real_root()
    if not root.is_dir():
        pytest.skip(f"real transcripts not found at {root}: set STALLSCAN_REAL_DATA")
    res = agreement([root], tmp_path, every)
    _report(res, root)
    assert not res["_bad"], sorted(res["_bad"])[:20]
    agreed = Counter()
    for f, c in res.items():
        if f != "_bad":
            agreed.update(c)
    print("total", dict(agreed))
    assert agreed["agree"] > 300
    # most of them went through the whole hook path (transcript tail + hook JSON), from many files
    hooked = [f for f, c in res.items() if f != "_bad" and c["via_hook"]]
    assert agreed["via_hook"] > 250 and len(hooked) >= 35, json.dumps(hooked)
