"""Codex prompt pairing by position: the response_item user message and the
event_msg/user_message of one turn pair by adjacency, text only as a tie-break.

Hand-made rollouts below state each case; the real-file test redacts a real rollout the way shared
exports do (different placeholder words in the two copies) and asks for the same human prompts and the
same turn boundaries as the unredacted file. Expected pairs come from the records' positions as
written here / in the raw file, never from the code under test.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stallscan.ingest.run import ingest_paths
from stallscan.replay.boundaries import replay_boundaries
from stallscan.store.db import connect
from tests.helpers import real_root

TS = "2026-03-01T10:00:{:02d}.000Z"


def rec(n: int, type_: str, payload: dict) -> str:
    return json.dumps({"timestamp": TS.format(n), "type": type_, "payload": payload})


def item(n: int, text: str, role: str = "user") -> str:
    return rec(n, "response_item", {"type": "message", "role": role, "content": [{"type": "input_text", "text": text}]})


def umsg(n: int, text: str) -> str:
    return rec(n, "event_msg", {"type": "user_message", "message": text, "images": []})


def reply(n: int, text: str) -> str:
    return rec(
        n,
        "response_item",
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}]},
    )


def meta(n: int = 0) -> str:
    return rec(n, "session_meta", {"id": "sess-1", "cli_version": "0.104.0", "originator": "codex_cli_rs"})


def user_rows(con, path: Path) -> list[tuple]:
    return con.execute(
        "SELECT e.line, e.last_line, e.kind, l.origin FROM events e JOIN user_labels l USING (event_id) "
        "WHERE e.file = ? AND e.role = 'user' ORDER BY e.line",
        [str(path)],
    ).fetchall()


def ingest(tmp_path: Path, lines: list[str]) -> tuple:
    p = tmp_path / "rollout.jsonl"
    p.write_text("\n".join(lines) + "\n")
    con = connect(":memory:")
    ingest_paths(con, [str(p)])
    replay_boundaries(con, relabel=True)
    return con, p


def test_redacted_copies_pair_by_position(tmp_path):
    # the two copies of each prompt carry different placeholders (text pairing finds no pair at all)
    con, p = ingest(
        tmp_path,
        [
            meta(0),
            item(1, "<environment_context>\n  <cwd>/x</cwd>\n</environment_context>"),
            rec(2, "turn_context", {"model": "gpt-5", "turn_id": "t1"}),
            item(3, "[REDACTED_TEXT len=12]"),
            umsg(4, "<redacted>"),
            reply(9, "done"),
            item(30, "[REDACTED_TEXT len=5]"),
            umsg(31, "<redacted>"),
            reply(35, "ok"),
        ],
    )
    assert user_rows(con, p) == [
        (2, 2, "context", "automatic"),
        (4, 5, "message", "human"),
        (7, 8, "message", "human"),
    ]


def test_event_before_item_and_text_tie_break(tmp_path):
    # L2 event with a user item on both sides: the one carrying its text (L3) wins over L1
    con, p = ingest(
        tmp_path,
        [meta(0), item(1, "first copy A"), umsg(2, "second B"), item(3, "second B"), reply(5, "r")],
    )
    assert user_rows(con, p) == [(2, 2, "context", "automatic"), (3, 4, "message", "human")]


def test_fragment_never_takes_a_queued_message(tmp_path):
    # a mid-turn user_message right after an injected <environment_context> item is human input of its
    # own (queued_input), not that item's copy
    con, p = ingest(
        tmp_path,
        [
            meta(0),
            item(1, "fix the bug"),
            umsg(2, "fix the bug"),
            reply(3, "looking"),
            item(4, "<environment_context>\n  <shell>bash</shell>\n</environment_context>"),
            umsg(5, "also run the tests"),
            reply(8, "ok"),
        ],
    )
    assert user_rows(con, p) == [
        (2, 3, "message", "human"),
        (5, 5, "context", "automatic"),
        (6, 6, "queued_input", "human"),
    ]


def test_text_fallback_for_non_adjacent_copies(tmp_path):
    # copies separated by model output cannot pair by position: the same text still pairs them
    con, p = ingest(
        tmp_path,
        [meta(0), item(1, "go on"), reply(2, "thinking"), umsg(3, "go on"), reply(5, "r")],
    )
    assert user_rows(con, p) == [(2, 4, "message", "human")]


# --------------------------------------------------------------------------------------------------
# real rollouts, redacted by the test
# --------------------------------------------------------------------------------------------------
REAL = [
    "codex/pinouchon-rtchess/019aad50-a7e6-7422-b7a8-0b384290624f_rtchess_1.jsonl",
    "codex/blackgirlbytes-planetfall-seed-signalkit/entire-checkpoints-v1__bf_8e29b5ca2e_0_full.jsonl",
    "codex/yashpunmiya-Solsmile/codex-session.jsonl",
]


def redact(src: Path, dst: Path, style: str) -> int:
    """Copy a rollout, replacing the text of every user-role item and every user_message event with a
    placeholder; the two copies of a prompt get different placeholder words. Returns the count replaced."""
    n = 0
    with open(src, encoding="utf-8") as fh, open(dst, "w", encoding="utf-8") as out:
        for i, raw in enumerate(fh, 1):
            o = json.loads(raw)
            p = o.get("payload") or {}
            if o.get("type") == "response_item" and p.get("type") == "message" and p.get("role") == "user":
                for b in p.get("content", []):
                    if "text" in b:
                        b["text"] = "[REDACTED]" if style == "constant" else f"[REDACTED_TEXT len={len(b['text'])}]"
                n += 1
            elif o.get("type") == "event_msg" and p.get("type") == "user_message":
                p["message"] = "<redacted>" if style == "constant" else f"<scrubbed line {i}>"
                n += 1
            out.write(json.dumps(o, ensure_ascii=False) + "\n")
    return n


def human_and_boundaries(path: Path):
    con = connect(":memory:")
    ingest_paths(con, [str(path)])
    replay_boundaries(con, relabel=True)
    humans = con.execute(
        "SELECT e.line, e.last_line, e.kind FROM events e JOIN user_labels l USING (event_id) "
        "WHERE l.origin = 'human' ORDER BY e.line"
    ).fetchall()
    bounds = con.execute(
        "SELECT e.line, b.decided_by, b.decision, b.gap_s, CASE WHEN b.origin = 'human' THEN b.is_human_turn END "
        "FROM turn_boundaries b JOIN events e USING (event_id) ORDER BY e.line"
    ).fetchall()
    con.close()
    return humans, bounds


@pytest.mark.parametrize("style", ["constant", "numbered"])
@pytest.mark.parametrize("rel", REAL, ids=[r.split("/")[1] for r in REAL])
def test_real_rollout_redacted_same_prompts_and_boundaries(tmp_path, rel, style):
    src = real_root() / rel
    if not src.is_file():
        pytest.skip(f"real data absent: {src} (set STALLSCAN_REAL_DATA)")
    dst = tmp_path / "redacted" / src.name
    dst.parent.mkdir()
    assert redact(src, dst, style) > 0
    # the raw file's own markers: every user_message event is a human prompt (PROVENANCE §3 / §12)
    with open(src, encoding="utf-8") as fh:
        recs = [json.loads(line) for line in fh]
    n_events = sum(1 for o in recs if o.get("type") == "event_msg" and o["payload"].get("type") == "user_message")
    humans, bounds = human_and_boundaries(src)
    r_humans, r_bounds = human_and_boundaries(dst)
    assert len(humans) == n_events
    assert r_humans == humans
    assert r_bounds == bounds


def test_skill_body_after_a_prompt_is_injected_context(tmp_path):
    # Codex injects the body of a skill the prompt names as a user item right after the prompt
    skill = "<skill>\n<name>apply-grant</name>\n<path>/home/u/.codex/skills/apply-grant/SKILL.md</path>\n# Apply\nSteps...\n</skill>"
    con, p = ingest(
        tmp_path,
        [
            meta(0),
            item(1, "help me apply [$apply-grant](x)"),
            umsg(2, "help me apply [$apply-grant](x)"),
            item(3, skill),
            reply(6, "ok"),
        ],
    )
    assert user_rows(con, p) == [(2, 3, "message", "human"), (4, 4, "context", "automatic")]
    got = con.execute(
        "SELECT l.origin_rule, l.starts_request FROM user_labels l JOIN events e USING (event_id) WHERE e.kind = 'context'"
    ).fetchall()
    assert got == [("codex.skill_body", False)]
