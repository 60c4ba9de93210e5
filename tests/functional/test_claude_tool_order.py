"""Claude Code 2.1 writes a reply's tool_use line after that call's own tool_result (real:
Sarthib7-FundWise claude-session.jsonl L227 result / L229 tool_use; planetfall 35_00b4613672 L164/L166,
L169/L171, L1209/L1211; 09_cb2aeecea3 L594/L596). The reply's lines pair by message.id, hence by
tool-call id, not by adjacency, so no detector takes its text line for a dropped call (the text line
carries stop_reason "tool_use" and no tool_use block of its own).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stallscan.ingest.run import ingest_paths
from stallscan.replay.stalls import replay_stalls
from stallscan.store.db import connect
from tests.helpers import real_files

TS = "2026-05-04T14:32:{:06.3f}Z"


def line(n: float, typ: str, uuid: str, parent: str | None, **kw) -> str:
    rec = {
        "type": typ,
        "uuid": uuid,
        "parentUuid": parent,
        "sessionId": "s21",
        "isSidechain": False,
        "timestamp": TS.format(n),
        "version": "2.1.121",
        "userType": "external",
    }
    rec.update(kw)
    return json.dumps(rec)


def prompt(n, uuid, text):
    return line(n, "user", uuid, None, message={"role": "user", "content": text})


def text(n, uuid, parent, msg, t, stop="tool_use"):
    return line(
        n,
        "assistant",
        uuid,
        parent,
        requestId="req_" + msg,
        message={
            "id": msg,
            "role": "assistant",
            "model": "claude-opus-4-7",
            "stop_reason": stop,
            "content": [{"type": "text", "text": t}],
        },
    )


def use(n, uuid, parent, msg, call, name="Edit"):
    return line(
        n,
        "assistant",
        uuid,
        parent,
        requestId="req_" + msg,
        message={
            "id": msg,
            "role": "assistant",
            "model": "claude-opus-4-7",
            "stop_reason": "tool_use",
            "content": [{"type": "tool_use", "id": call, "name": name, "input": {"file_path": "a.md"}}],
        },
    )


def result(n, uuid, parent, call):
    return line(
        n,
        "user",
        uuid,
        parent,
        sourceToolAssistantUUID=parent,
        message={"role": "user", "content": [{"type": "tool_result", "tool_use_id": call, "content": "ok"}]},
        toolUseResult={"filePath": "a.md"},
    )


def final(n, uuid, parent, msg):
    return text(n, uuid, parent, msg, "Both files are updated.", stop="end_turn")


def check(con):
    """Every tool-using message is one event with its calls; every result pairs with a call by id (in its
    file: a resumed session may re-log the last result under its new session id, mai0313 L49)."""
    replay_stalls(con)
    assert con.execute(
        "SELECT count(*) FROM rounds WHERE round_kind IN ('dropped_tool_call', 'narrated_intent')"
    ).fetchone() == (0,)
    unpaired = con.execute(
        "SELECT r.line FROM events r WHERE r.kind = 'tool_result' AND r.tool_call_id NOT IN "
        "(SELECT unnest(list_transform(tool_calls, lambda c: c.id)) FROM events a WHERE a.role = 'assistant' "
        " AND a.file = r.file)"
    ).fetchall()
    assert unpaired == []
    return con.execute(
        "SELECT line, last_line, n_records, n_tool_calls FROM events WHERE role = 'assistant' ORDER BY line"
    ).fetchall()


# L1 prompt; L2 call X (msg A); L3 result of X; L4 text of reply B ("Now update ..."); L5 result of Y,
# written before L6, B's tool_use Y (the real Sarthib7 L227/L228/L229 order); L7 final (msg C)
ROWS = [
    prompt(1.0, "u1", "update issues.md and STATUS.md"),
    use(4.1, "a1", "u1", "msg_A", "toolu_X"),
    result(4.2, "r1", "a1", "toolu_X"),
    text(4.9, "b1", "r1", "msg_B", "Now update issues.md and STATUS.md to reflect FW-005 done:"),
    result(8.9, "r2", "b2", "toolu_Y"),
    use(8.8, "b2", "b1", "msg_B", "toolu_Y"),
    final(12.0, "c1", "r2", "msg_C"),
]


def test_tool_use_after_its_result(tmp_path):
    p = tmp_path / "s21.jsonl"
    p.write_text("\n".join(ROWS) + "\n")
    con = connect(":memory:")
    ingest_paths(con, [str(p)])
    assert check(con) == [(2, 2, 1, 1), (4, 6, 2, 1), (7, 7, 1, 0)]


def test_reply_straddling_another_reply(tmp_path):
    # B's text, then all of reply D (call Z + its result), then B's result and tool_use: still one reply B
    rows = [
        ROWS[0],
        ROWS[1],
        ROWS[2],
        ROWS[3],
        use(5.5, "d1", "b1", "msg_D", "toolu_Z"),
        result(5.9, "r3", "d1", "toolu_Z"),
        ROWS[4],
        ROWS[5],
        ROWS[6],
    ]
    p = tmp_path / "s21.jsonl"
    p.write_text("\n".join(rows) + "\n")
    con = connect(":memory:")
    ingest_paths(con, [str(p)])
    assert check(con) == [(2, 2, 1, 1), (4, 8, 2, 1), (5, 5, 1, 1), (9, 9, 1, 0)]


def test_tool_use_line_arrives_in_a_later_read(tmp_path):
    # a live log read while B's tool_use line is not written yet, then again when it is
    p = tmp_path / "s21.jsonl"
    p.write_text("\n".join(ROWS[:5]) + "\n")
    con = connect(":memory:")
    ingest_paths(con, [str(p)])
    with open(p, "a") as fh:
        fh.write("\n".join(ROWS[5:]) + "\n")
    ingest_paths(con, [str(p)])
    assert check(con) == [(2, 2, 1, 1), (4, 6, 2, 1), (7, 7, 1, 0)]


def test_a_reused_id_after_a_prompt_is_another_reply(tmp_path):
    rows = [
        ROWS[0],
        text(2.0, "x1", "u1", "msg_R", "first answer", stop="end_turn"),
        prompt(30.0, "u2", "and again?"),
        text(33.0, "x2", "u2", "msg_R", "second answer", stop="end_turn"),
    ]
    p = tmp_path / "s21.jsonl"
    p.write_text("\n".join(rows) + "\n")
    con = connect(":memory:")
    ingest_paths(con, [str(p)])
    assert con.execute("SELECT line, last_line FROM events WHERE role = 'assistant' ORDER BY line").fetchall() == [
        (2, 2),
        (4, 4),
    ]


def raw_tool_messages(path: Path) -> set[str]:
    ids = set()
    with open(path, encoding="utf-8") as fh:
        for raw in fh:
            try:
                o = json.loads(raw)
            except ValueError:
                continue
            m = o.get("message") if isinstance(o, dict) else None
            if (
                isinstance(m, dict)
                and isinstance(m.get("content"), list)
                and o.get("type") == "assistant"
                and any(isinstance(b, dict) and b.get("type") == "tool_use" for b in m["content"])
            ):
                ids.add(m.get("id"))
    return ids


@pytest.fixture(scope="module")
def real_claude():
    """Every real Claude Code file ingested together (as a user's folder is) and replayed, once for the module."""
    files = real_files("claude-code")
    if not files:
        pytest.skip("real data absent (../shared/data/real or $STALLSCAN_REAL_DATA)")
    con = connect(":memory:")
    ingest_paths(con, [str(p) for p in files])
    replay_stalls(con)
    assert con.execute("SELECT count(DISTINCT file) FROM events").fetchone()[0] > 30  # (most files hold events)
    yield con
    con.close()


@pytest.mark.parametrize("path", real_files("claude-code") or [None], ids=lambda p: p.name if p else "absent")
def test_real_files_tool_messages_are_whole(path, real_claude):
    """check()'s conditions, and no tool-using message split, on each real file's rows (real_claude skips when
    the real data is absent)."""
    con, f = real_claude, str(path)
    assert con.execute(
        "SELECT count(*) FROM rounds JOIN events e USING (event_id) WHERE e.file = ? "
        "AND round_kind IN ('dropped_tool_call', 'narrated_intent')",
        [f],
    ).fetchone() == (0,)
    unpaired = con.execute(
        "SELECT r.line FROM events r WHERE r.file = ? AND r.kind = 'tool_result' AND r.tool_call_id NOT IN "
        "(SELECT unnest(list_transform(tool_calls, lambda c: c.id)) FROM events a WHERE a.role = 'assistant' "
        " AND a.file = r.file)",
        [f],
    ).fetchall()
    assert unpaired == []
    tool_msgs = raw_tool_messages(path)
    split = con.execute(
        "SELECT message_id, line FROM events WHERE file = ? AND role = 'assistant' AND n_tool_calls = 0 "
        "AND list_contains(?, message_id)",
        [f, sorted(i for i in tool_msgs if i)],
    ).fetchall()
    assert split == [], "lines of a tool-using reply became a text-only event"


# harness texts real Claude Code files carry, each with its library entry (stallscan/data/prompts.toml)
REAL_INJECTED = [
    ("yashpunmiya-Solsmile/claude-session.jsonl", 250, "claude.continue_from_where_you_left_off"),
    (
        "blackgirlbytes-planetfall-seed-signalkit/entire-checkpoints-v1__35_00b4613672_2_full.jsonl",
        271,
        "claude.skill_body",
    ),
    (
        "blackgirlbytes-planetfall-seed-signalkit/entire-checkpoints-v1__35_00b4613672_2_full.jsonl",
        409,
        "claude.compact_summary.after_manual_compaction",
    ),
    ("drmaciver-claude-reliability/hello-world-script/transcript.jsonl", 8, "claude.stop_hook_feedback"),
]


@pytest.mark.parametrize("rel,line,rule", REAL_INJECTED, ids=[f"{r[0].split('/')[0]}-L{r[1]}" for r in REAL_INJECTED])
def test_real_injected_texts_have_their_entry(rel, line, rule):
    from stallscan.replay.labels import label_events
    from tests.helpers import real_root

    path = real_root() / "claude-code" / rel
    if not path.is_file():
        pytest.skip(f"real data absent: {path}")
    con = connect(":memory:")
    ingest_paths(con, [str(path)])
    label_events(con, {})
    got = con.execute(
        "SELECT l.origin, l.origin_rule FROM events e JOIN user_labels l USING (event_id) WHERE e.line = ?", [line]
    ).fetchall()
    assert got == [("automatic", rule)]
