"""Cline with only ui_messages.json: the UI stream read as the conversation.

tests/golden/cline_ui/ holds one hand-made task twice: ui_only/ (the UI file alone, as shared exports
often are) and both/ (the same task with its api_conversation_history.json). expected.json was written by
reading the rows' kinds (formats.md §3); the human prompts must be the same ones either way.

The real Cline task in ../shared/data/real (MRA04242026) has only its API file; PROVENANCE's UI file
(haram-333/fineye) is not in the folder, so the "API file hidden" check on real data runs on whatever
real task folder holds a ui_messages.json and skips, saying so, when none does.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from stallscan.ingest.run import ingest_paths
from stallscan.replay.boundaries import replay_boundaries
from stallscan.store.db import connect
from tests.helpers import TESTS, real_root

GOLDEN = TESTS / "golden" / "cline_ui"
EXPECTED = json.loads((GOLDEN / "expected.json").read_text(encoding="utf-8"))


def load(path: Path):
    con = connect(":memory:")
    ingest_paths(con, [str(path)])
    replay_boundaries(con, relabel=True)
    return con


def human_prompts(con) -> list[str]:
    """The text people typed: human messages, and the human text inside automatic envelopes
    (Cline's <feedback> in a tool result, [TASK RESUMPTION] with new instructions)."""
    rows = con.execute(
        "SELECT coalesce(e.meta ->> 'human_text', e.text) FROM events e JOIN user_labels l USING (event_id) "
        "WHERE (l.origin = 'human' AND l.starts_request) OR (l.human_content AND e.meta ->> 'human_text' IS NOT NULL) "
        "ORDER BY e.seq"
    ).fetchall()
    return [r[0].strip() for r in rows]


def test_ui_only_is_a_conversation():
    con = load(GOLDEN / "ui_only")
    exp = EXPECTED["ui_only"]
    assert con.execute("SELECT n_lines, n_rejects, status FROM files").fetchone() == (exp["ui_rows"], 0, "ok")
    users = con.execute(
        "SELECT e.line, e.kind, l.origin FROM events e JOIN user_labels l USING (event_id) ORDER BY e.line"
    ).fetchall()
    assert [list(r) for r in users] == exp["user_rows"]
    replies = con.execute(
        "SELECT line, last_line, n_tool_calls FROM events WHERE role = 'assistant' ORDER BY line"
    ).fetchall()
    assert [list(r) for r in replies] == exp["replies"]
    # the request timings stay: every api_req_started row is an event carrying its tokens
    assert con.execute(
        "SELECT count(*) FROM events WHERE meta ->> 'ui_kind' = 'say:api_req_started' AND (meta -> 'api_req') IS NOT NULL"
    ).fetchone() == (8,)
    bounds = con.execute(
        "SELECT e.line, b.decision, b.origin FROM turn_boundaries b JOIN events e USING (event_id) "
        "WHERE b.starts_request AND e.kind = 'message' AND b.origin IN ('human', 'automatic') "
        "AND (b.origin = 'human' OR e.meta ->> 'no_tool_error' = 'true') ORDER BY e.line"
    ).fetchall()
    assert [list(r) for r in bounds] == exp["boundaries"]
    assert human_prompts(con) == EXPECTED["human_prompts"]


def test_both_files_keep_the_api_conversation_and_ui_timings():
    con = load(GOLDEN / "both")
    # UI rows never become user/assistant events when the API file is there
    assert con.execute(
        "SELECT count(*) FROM events WHERE meta ->> 'cline_file' = 'ui' AND role <> 'system'"
    ).fetchone() == (0,)
    assert con.execute(
        "SELECT count(*) FROM events WHERE meta ->> 'cline_file' = 'ui' AND meta ->> 'ui_kind' = 'say:api_req_started' "
        "AND ts IS NOT NULL AND meta -> 'api_req' ->> 'tokensIn' IS NOT NULL"
    ).fetchone() == (EXPECTED["both"]["ui_request_timings"],)
    assert human_prompts(con) == EXPECTED["human_prompts"]


def test_ui_file_copied_alone_gives_the_same_prompts(tmp_path):
    """The brief's procedure: copy the UI file alone into a new task folder."""
    src = GOLDEN / "both" / "1780300000000" / "ui_messages.json"
    dst = tmp_path / "1780300000000"
    dst.mkdir()
    shutil.copy(src, dst / "ui_messages.json")
    assert human_prompts(load(tmp_path)) == human_prompts(load(GOLDEN / "both"))


def real_cline_tasks() -> list[Path]:
    root = real_root() / "cline"
    return sorted(p.parent for p in root.rglob("ui_messages.json")) if root.is_dir() else []


@pytest.mark.parametrize("task", real_cline_tasks() or [None])
def test_real_cline_api_file_hidden(tmp_path, task):
    if task is None:
        pytest.skip(
            "no real Cline task folder with a ui_messages.json under ../shared/data/real/cline "
            "(PROVENANCE §4 holds only MRA04242026's api_conversation_history.json)"
        )
    dst = tmp_path / task.name
    dst.mkdir()
    shutil.copy(task / "ui_messages.json", dst / "ui_messages.json")
    hidden = human_prompts(load(tmp_path))
    if (task / "api_conversation_history.json").is_file():
        assert hidden == human_prompts(load(task))
    else:
        assert hidden, "a real UI file with no human prompt read from it"


def test_ui_only_rows_of_every_wrong_type_still_add_up(tmp_path):
    """Each field of each golden UI row replaced by a value of another JSON type: every row still ends
    as an event, a counted skip or a reject (the line accounting of tests/hostile.py)."""
    from tests.hostile import accounting_errors

    doc = json.loads((GOLDEN / "ui_only" / "1780300000000" / "ui_messages.json").read_text(encoding="utf-8"))
    wrong = [None, True, 7, -1.5, "x", [], {}, ["a", 1], {"k": [1]}]
    con = connect(":memory:")
    for i, value in enumerate(wrong):
        for key in ("ts", "type", "say", "ask", "text", "partial", "modelInfo", "conversationHistoryIndex"):
            mutated = [dict(r, **{key: value}) if n % 3 == i % 3 else r for n, r in enumerate(doc)]
            d = tmp_path / f"{i}-{key}"
            d.mkdir()
            (d / "ui_messages.json").write_text(json.dumps(mutated), encoding="utf-8")
    ingest_paths(con, [str(tmp_path)])
    assert not accounting_errors(con)
    assert con.execute("SELECT min(n_lines), max(n_lines) FROM files").fetchone() == (len(doc), len(doc))
    replay_boundaries(con, relabel=True)  # and the replay runs over whatever came out
