"""opencode sessions: `opencode export` documents and bare [{info, parts}] lists.

sample_logs/opencode/session-export.json is hand-made in the shape sst/opencode writes (message-v2.ts
message info + parts; compaction.ts for the compaction request and its automatic continue message).
Expected rows below come from reading that file, not from the code under test. No real opencode file
is held (PROVENANCE §11), so there is no real-data test.
"""

from __future__ import annotations

import json

import pytest

from stallscan.ingest.detect import detect_format
from stallscan.ingest.run import ingest_paths
from stallscan.replay.boundaries import replay_boundaries
from stallscan.replay.stalls import replay_stalls
from stallscan.store.db import connect
from tests.helpers import SAMPLES
from tests.hostile import accounting_errors

SAMPLE = SAMPLES / "opencode" / "session-export.json"
DOC = json.loads(SAMPLE.read_text(encoding="utf-8"))


def test_detected_in_every_shape(tmp_path):
    assert detect_format(SAMPLE) == "opencode"
    mini = tmp_path / "mini.json"
    mini.write_text(json.dumps(DOC, separators=(",", ":")))
    bare = tmp_path / "messages.json"
    bare.write_text(json.dumps(DOC["messages"], indent=2))
    assert detect_format(mini) == "opencode"
    assert detect_format(bare) == "opencode"


# (message line, part, role, kind, origin) as read from the sample: message 1 the person's prompt; 2-5
# model calls (tool parts -> tool results on the same line); 6 the compaction request opencode sends
# itself (a compaction part, auto); 7 the summary call; 8 the synthetic "Continue if you have next
# steps..." (metadata.compaction_continue); 10 the person's second prompt (its synthetic file-read parts
# are not its text); 11-12 the tool call and the answer.
EXPECTED = [
    (1, 1, "user", "message", "human"),
    (2, 1, "assistant", "message", None),
    (2, 2, "tool", "tool_result", "tool_result"),
    (3, 1, "assistant", "message", None),
    (3, 2, "tool", "tool_result", "tool_result"),
    (3, 3, "tool", "tool_result", "tool_result"),
    (3, 4, "tool", "tool_result", "tool_result"),
    (4, 1, "assistant", "message", None),
    (4, 2, "tool", "tool_result", "tool_result"),
    (5, 1, "assistant", "message", None),
    (6, 1, "user", "message", "automatic"),
    (7, 1, "assistant", "message", None),
    (8, 1, "user", "message", "automatic"),
    (9, 1, "assistant", "message", None),
    (10, 1, "user", "message", "human"),
    (11, 1, "assistant", "message", None),
    (11, 2, "tool", "tool_result", "tool_result"),
    (12, 1, "assistant", "message", None),
]


@pytest.fixture
def sample_con():
    con = connect(":memory:")
    ingest_paths(con, [str(SAMPLE)])
    replay_boundaries(con, relabel=True)
    yield con
    con.close()


def test_sample_events_and_labels(sample_con):
    con = sample_con
    rows = con.execute(
        "SELECT e.line, e.part, e.role, e.kind, l.origin FROM events e LEFT JOIN user_labels l USING (event_id) "
        "ORDER BY e.seq"
    ).fetchall()
    assert rows == EXPECTED
    assert con.execute("SELECT n_lines, n_rejects, n_events, status FROM files").fetchone() == (12, 0, 18, "ok")
    assert con.execute("SELECT DISTINCT session_id FROM events").fetchall() == [("ses_3f2a9c1e7ffeQk2Lr8VxN4bT1m",)]
    rules = con.execute(
        "SELECT e.line, l.origin_rule FROM events e JOIN user_labels l USING (event_id) WHERE e.role = 'user' ORDER BY 1"
    ).fetchall()
    assert rules == [
        (1, "default_human"),
        (6, "opencode.compaction_auto"),
        (8, "opencode.compaction_continue"),
        (10, "default_human"),
    ]
    line10 = con.execute("SELECT text FROM events WHERE line = 10 AND role = 'user'").fetchone()[0]
    assert line10 == "thanks, now run the tests"  # the synthetic file-read parts are not the person's text
    calls = con.execute(
        "SELECT line, finish_norm, list_transform(tool_calls, lambda c: c.name) FROM events WHERE role = 'assistant' "
        "ORDER BY line"
    ).fetchall()
    assert calls[1] == (3, "tool_calls", ["edit", "edit", "edit"])
    assert calls[3] == (5, "stop", [])
    err = con.execute("SELECT meta ->> 'is_error' FROM events WHERE line = 3 AND part = 4").fetchone()[0]
    assert err == "true"  # the failed edit's result


def test_sample_turns_and_stalls(sample_con):
    con = sample_con
    # the router: two human turns; the automatic compaction request and continue arrive < 2 s after a final reply
    got = con.execute(
        "SELECT e.line, b.decision, b.error FROM turn_boundaries b JOIN events e USING (event_id) "
        "WHERE e.role = 'user' ORDER BY e.line"
    ).fetchall()
    assert got == [
        (1, "human", "none"),
        (6, "continuation", "none"),
        (8, "continuation", "none"),
        (10, "human", "none"),
    ]
    replay_stalls(con)
    kinds = con.execute("SELECT round_kind, count(*) FROM rounds GROUP BY ALL ORDER BY 1").fetchall()
    assert kinds == [("final", 4), ("tool_round", 4)]  # replies 5, 7, 9, 12; calls 2, 3, 4, 11


def test_bad_documents_and_wrong_types(tmp_path):
    (tmp_path / "a").mkdir()
    trunc = tmp_path / "a" / "cut.json"
    trunc.write_text(SAMPLE.read_text(encoding="utf-8")[:3000])
    other = tmp_path / "a" / "other.json"
    other.write_text(json.dumps({"info": {"id": "ses_x"}, "messages": {"not": "a list"}}, indent=2))
    con = connect(":memory:")
    ingest_paths(con, [str(tmp_path / "a")], fmt="opencode")
    rej = dict(con.execute("SELECT regexp_extract(file, '[^/]+$'), reason FROM rejects").fetchall())
    assert rej == {
        "cut.json": "invalid JSON (truncated or malformed document)",
        "other.json": "not an opencode session (no message list)",
    }
    wrong = [None, True, 7, "x", [], {}, ["a"], {"k": 1}]
    for i, value in enumerate(wrong):
        for key in ("info", "parts", "role", "time", "state", "text", "synthetic", "metadata"):
            doc = json.loads(json.dumps(DOC))
            for n, m in enumerate(doc["messages"]):
                if n % 3 != i % 3:
                    continue
                if key in ("info", "parts"):
                    m[key] = value
                elif key in ("role", "time"):
                    m["info"][key] = value
                else:
                    for p in m["parts"]:
                        if key in p or key == "metadata":
                            p[key] = value
            (tmp_path / f"w{i}-{key}.json").write_text(json.dumps(doc, indent=2), encoding="utf-8")
    ingest_paths(con, [str(tmp_path)], fmt="opencode")
    assert not accounting_errors(con)
    replay_boundaries(con, relabel=True)
