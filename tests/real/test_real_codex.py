"""Ingest of the real Codex rollouts (../shared/data/real/codex), checked against the raw files.

Expected events are rebuilt here from the records' own ``type`` / ``payload.type`` markers (formats.md §2):
a ``response_item`` user message immediately followed by an ``event_msg/user_message`` with the same text is
one human event; other user/developer items are harness context; consecutive model output items (assistant
message, function_call, custom_tool_call) with no output/user item between are one assistant event.
PROVENANCE.md §3/§12 figures are hard-coded next to the computed ones.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.real import helpers as _h

count_records, compare_rows, event_rows, fetch = _h.count_records, _h.compare_rows, _h.event_rows, _h.fetch
file_row, norm_text, parse_ts, read_jsonl = _h.file_row, _h.norm_text, _h.parse_ts, _h.read_jsonl
same_arguments, skipped_by_kind, skipped_lines = _h.same_arguments, _h.skipped_by_kind, _h.skipped_lines

MODEL_OUTPUT = {"message:assistant", "function_call", "custom_tool_call"}
TOOL_OUTPUT = {"function_call_output", "custom_tool_call_output"}
TURN_KINDS = {"task_started": "turn_start", "task_complete": "turn_end", "turn_aborted": "turn_aborted"}
MIRRORS = {
    "agent_message": "mirror:agent_message",
    "agent_reasoning": "mirror:agent_reasoning",
    "token_count": "token_count",
}


def rkind(o) -> str:
    """'<payload.type>[:role]' for response_items, 'event:<payload.type>' for event_msg, else the type."""
    p = o.get("payload") or {}
    if o["type"] == "response_item":
        return f"message:{p.get('role')}" if p.get("type") == "message" else p.get("type")
    if o["type"] == "event_msg":
        return f"event:{p.get('type')}"
    return o["type"]


def content_text(p) -> str:
    return "\n".join(b.get("text", "") for b in p.get("content", []) if b.get("type") in ("input_text", "output_text"))


def codex_model(path):
    recs = read_jsonl(path)
    session_id = next(o["payload"]["id"] for _, o in recs if o and o["type"] == "session_meta")
    events, mirrors, ambiguous = [], {}, set()
    consumed = set()
    group: dict[str, Any] | None = None
    for idx, (ln, o) in enumerate(recs):
        assert o is not None, f"{path}:{ln} blank line"
        k, p, ts = rkind(o), o.get("payload") or {}, o["timestamp"]
        if k in ("message:user", "message:developer"):
            group = None
            text = content_text(p)
            nxt = recs[idx + 1][1] if idx + 1 < len(recs) else None
            paired = (
                k == "message:user"
                and nxt is not None
                and rkind(nxt) == "event:user_message"
                and nxt["payload"].get("message") == text
            )
            ev: dict[str, Any] = {
                "line": ln,
                "last_line": ln + 1 if paired else ln,
                "n_records": 2 if paired else 1,
                "role": "user" if k == "message:user" else {"user", "system"},
                "kind": "message" if paired else "context",
                "ts": parse_ts(ts),
                "ts_end": parse_ts(nxt["timestamp"]) if paired else parse_ts(ts),
                "_text": text,
                "_calls": [],
                "_meta": {"paired": paired},
            }
            if paired:
                consumed.add(ln + 1)
            events.append(ev)
        elif k == "event:user_message":
            group = None
            assert ln in consumed, f"{path}:L{ln} user_message without its response_item (none in the real files)"
        elif k in MODEL_OUTPUT:
            if group is None:
                group = {
                    "line": ln,
                    "role": "assistant",
                    "kind": "message",
                    "ts": parse_ts(ts),
                    "recs": [],
                }
                events.append(group)
            group["recs"].append((ln, o))
            group["last_line"], group["ts_end"] = ln, parse_ts(ts)
        elif k in TOOL_OUTPUT:
            group = None
            out = p.get("output")
            events.append(
                {
                    "line": ln,
                    "last_line": ln,
                    "n_records": 1,
                    "role": "tool",
                    "kind": "tool_result",
                    "tool_call_id": p["call_id"],
                    "ts": parse_ts(ts),
                    "ts_end": parse_ts(ts),
                    "_text": out if isinstance(out, str) else ...,
                    "_calls": [],
                }
            )
        elif k.startswith("event:") and k[6:] in TURN_KINDS:
            group = None
            ev = {
                "line": ln,
                "last_line": ln,
                "n_records": 1,
                "role": "system",
                "kind": TURN_KINDS[k[6:]],
                "ts": parse_ts(ts),
                "ts_end": parse_ts(ts),
                "_calls": [],
            }
            if "turn_id" in p:
                ev["turn_id"] = p["turn_id"]
            events.append(ev)
        elif k.startswith("event:") and k[6:] in MIRRORS:
            mirrors[ln] = MIRRORS[k[6:]]
        elif k in ("tool_search_call", "tool_search_output"):
            # not named by the contract: may be a call / result or neutral; tolerated around these lines
            ambiguous.add(ln)
            if k == "tool_search_output":
                group = None
    for ev in events:
        if "recs" in ev:
            recs_ = ev.pop("recs")
            msgs = [o["payload"] for _, o in recs_ if rkind(o) == "message:assistant"]
            calls = [o["payload"] for _, o in recs_ if rkind(o) in ("function_call", "custom_tool_call")]
            ev["n_records"] = len(recs_)
            ev["_text"] = "\n".join(content_text(m) for m in msgs) if msgs else None
            ev["_calls"] = [(c["call_id"], c["name"], c.get("arguments", c.get("input"))) for c in calls]
            phases = {m.get("phase") for m in msgs}
            ev["_meta"] = {"phase": phases.pop()} if len(phases) == 1 and None not in phases else {}
            ev["_ambiguous"] = bool(ambiguous & {ev["last_line"] + 1, ev["line"] - 1})
        ev.update(
            source_format="codex",
            file=str(path),
            part=0,
            session_id=session_id,
            ts_quality="per_message",
            is_sidechain=False,
        )
        ev.setdefault("tool_call_id", None)
    events.sort(key=lambda e: e["line"])
    return events, mirrors, ambiguous


def check_event(actual, exp) -> list[str]:
    where = f"{Path(exp['file']).name} L{exp['line']}"
    cols = {k: v for k, v in exp.items() if not k.startswith("_")}
    if exp.get("_ambiguous"):  # a neighbouring tool_search_call may or may not be merged into the reply
        for k in ("last_line", "n_records", "ts_end"):
            cols.pop(k)
    problems = compare_rows(actual, cols, where)
    if "_text" in exp and exp["_text"] is not ... and norm_text(actual.get("text")) != norm_text(exp["_text"]):
        problems.append(f"{where}: text = {actual.get('text')!r:.100}, expected {exp['_text']!r:.100}")
    calls = actual.get("tool_calls") or []
    want = exp["_calls"]
    if exp.get("_ambiguous"):  # a tool_search_call next to the group may or may not be counted as a call
        calls = [c for c in calls if c["id"] in {i for i, _, _ in want}]
    if [c["id"] for c in calls] != [i for i, _, _ in want] or any(
        not (c["name"] == n or c["name"].endswith(n)) or not same_arguments(c["arguments"], a)
        for c, (_, n, a) in zip(calls, want)
    ):
        problems.append(
            f"{where}: tool_calls {[(c['id'], c['name']) for c in calls]} != {[(i, n) for i, n, _ in want]}"
        )
    if actual.get("n_tool_calls") != len(actual.get("tool_calls") or []):
        problems.append(f"{where}: n_tool_calls {actual.get('n_tool_calls')} != len(tool_calls)")
    meta = actual.get("meta") or {}
    for key, val in exp.get("_meta", {}).items():
        if meta.get(key) != val:
            problems.append(f"{where}: meta.{key} = {meta.get(key)!r}, expected {val!r}")
    return problems


def _path(db, rel):
    p = db.root / "codex" / rel
    assert p.exists(), p
    return p


def _by_line(rows):
    return {r["line"]: r for r in rows}


# --------------------------------------------------------------------------------------------------
# every file
# --------------------------------------------------------------------------------------------------
def test_codex_conservation(db, codex_path):
    con = db.con
    n_real = count_records(codex_path)
    expected, mirrors, _ = codex_model(codex_path)
    fr = file_row(con, codex_path)
    assert fr is not None, f"no files row for {codex_path}"
    assert fr["source_format"] == "codex" and fr["status"] == "ok", fr
    assert fr["n_lines"] == n_real, (fr["n_lines"], n_real)
    assert fr["n_lines"] == fr["n_event_lines"] + fr["n_skipped"] + fr["n_rejects"], fr
    assert fr["n_rejects"] == 0
    assert fetch(con, "SELECT count(*) AS n FROM rejects WHERE file = ?", [str(codex_path)])[0]["n"] == 0
    # lines this test knows to be (part of) events / known to be skipped are lower bounds
    assert fr["n_event_lines"] >= sum(e["n_records"] for e in expected)
    assert fr["n_skipped"] >= len(mirrors)
    n_db = fetch(con, "SELECT count(*) AS n FROM events WHERE file = ?", [str(codex_path)])[0]["n"]
    assert fr["n_events"] == n_db
    sk = skipped_by_kind(con, codex_path)
    want = Counter(mirrors.values())
    for kind in MIRRORS.values():
        assert sk.get(kind, 0) == want.get(kind, 0), (kind, sk.get(kind, 0), want.get(kind, 0))
    per_line = skipped_lines(con, codex_path)
    if per_line is not None:
        wrong = {ln: (per_line.get(ln), k) for ln, k in mirrors.items() if per_line.get(ln) != k}
        assert not wrong, f"mirror/token_count lines not skipped with their kind: {list(wrong.items())[:10]}"


def test_codex_events_match_raw(db, codex_path):
    expected, mirrors, ambiguous = codex_model(codex_path)
    rows = event_rows(db.con, codex_path)
    by_line = _by_line(rows)
    problems = []
    for e in expected:
        r = by_line.get(e["line"])
        if r is None:
            problems.append(f"L{e['line']}: no event (expected {e['role']}/{e['kind']})")
            continue
        problems += check_event(r, e)
    # no event may start or end on a mirror / token_count line
    for r in rows:
        for ln in (r["line"], r["last_line"]):
            if ln in mirrors:
                problems.append(f"event L{r['line']}-L{r['last_line']} touches {mirrors[ln]} line L{ln}")
    # the user / assistant / tool events are exactly the expected ones (others, e.g. compaction, may exist)
    exp_lines = {e["line"] for e in expected}
    for r in rows:
        if r["role"] in ("user", "assistant", "tool") and r["line"] not in exp_lines | ambiguous:
            problems.append(f"unexpected {r['role']}/{r['kind']} event at L{r['line']}")
    assert not problems, f"{len(problems)} problems:\n" + "\n".join(problems[:40])


def test_codex_tool_call_totals(db, codex_path):
    recs = read_jsonl(codex_path)
    n_calls = sum(1 for _, o in recs if rkind(o) in ("function_call", "custom_tool_call"))
    n_search = sum(1 for _, o in recs if rkind(o) == "tool_search_call")
    rows = [r for r in event_rows(db.con, codex_path) if r["role"] == "assistant"]
    total = sum(r["n_tool_calls"] for r in rows)
    assert total in {n_calls, n_calls + n_search}, (total, n_calls, n_search)
    n_out = sum(1 for _, o in recs if rkind(o) in TOOL_OUTPUT)
    assert sum(r["kind"] == "tool_result" for r in event_rows(db.con, codex_path)) in {n_out, n_out + n_search}


def test_codex_seq_and_ids(db, codex_path):
    rows = event_rows(db.con, codex_path)
    seqs = [r["seq"] for r in rows]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
    assert len({r["event_id"] for r in rows}) == len(rows)
    assert len({r["session_id"] for r in rows}) == 1


# --------------------------------------------------------------------------------------------------
# documented figures (PROVENANCE §3 / §12)
# --------------------------------------------------------------------------------------------------
RTCHESS = "pinouchon-rtchess/019aad50-a7e6-7422-b7a8-0b384290624f_rtchess_1.jsonl"

DOCUMENTED = {
    # rel: (records, user_message events, harness user-role item lines, turn_aborted lines,
    #       {record type: documented count})
    RTCHESS: (
        2222,
        54,
        [2],
        [1258],
        {
            "token_count": 703,
            "agent_message": 53,
            "agent_reasoning": 151,
            "function_call": 125,
            "custom_tool_call": 173,
        },
    ),
    "mai0313-vibecodingtracker/codex.jsonl": (110, 1, [2], [], {}),
    "Krosss0001-rave-era-project/codex-session.jsonl": (
        629,
        7,
        [4, 613],
        [],
        {
            "function_call": 122,
            "custom_tool_call": 21,
            "token_count": 76,
            "agent_message": 27,
            "task_started": 7,
            "task_complete": 6,
        },
    ),
    "kunalcode12-openclaw_agent/codex-session.jsonl": (
        63,
        2,
        [4],
        [],
        {"function_call": 13, "token_count": 8, "agent_message": 6, "task_started": 2, "task_complete": 1},
    ),
    "yashpunmiya-Solsmile/codex-session.jsonl": (
        56,
        2,
        [4, 23, 29],
        [24],
        {"function_call": 8, "token_count": 7, "agent_message": 6, "task_started": 2},
    ),
    # wc -l 966 / 656: these two files have no final newline, so one more record each
    "blackgirlbytes-planetfall-seed-signalkit/entire-checkpoints-v1__bf_8e29b5ca2e_0_full.jsonl": (
        967,
        30,
        [4, 139, 823],
        [140],
        {
            "function_call": 155,
            "custom_tool_call": 12,
            "token_count": 121,
            "agent_message": 115,
            "task_started": 31,
            "task_complete": 30,
        },
    ),
    "blackgirlbytes-planetfall-seed-signalkit/entire-checkpoints-v1__5f_b95c04a965_0_full.jsonl": (
        657,
        19,
        [4],
        [],
        {
            "function_call": 97,
            "custom_tool_call": 10,
            "token_count": 77,
            "agent_message": 76,
            "task_started": 19,
            "task_complete": 18,
        },
    ),
}


@pytest.mark.parametrize("rel", sorted(DOCUMENTED))
def test_codex_documented_figures(db, rel):
    p = _path(db, rel)
    n_records, n_um, harness_user, aborted, types = DOCUMENTED[rel]
    recs = read_jsonl(p)
    kinds = Counter(rkind(o).removeprefix("event:") for _, o in recs)
    assert count_records(p) == n_records
    for t, n in types.items():
        assert kinds[t] == n, (t, kinds[t], n)  # raw file == PROVENANCE
    um_lines = [ln for ln, o in recs if rkind(o) == "event:user_message"]
    assert len(um_lines) == n_um

    fr = file_row(db.con, p)
    assert fr["n_lines"] == n_records
    rows = event_rows(db.con, p)
    ev = _by_line(rows)
    humans = [r for r in rows if r["role"] == "user" and r["kind"] == "message"]
    assert len(humans) == n_um
    assert sorted(r["last_line"] for r in humans) == um_lines  # each human event ends on its user_message
    assert all(r["n_records"] == 2 and r["meta"].get("paired") is True for r in humans)
    context_user = sorted(r["line"] for r in rows if r["kind"] == "context" and r["role"] == "user")
    assert context_user == harness_user
    for ln in harness_user:
        assert ev[ln]["meta"].get("paired") is False and ev[ln]["n_records"] == 1
    assert sorted(r["line"] for r in rows if r["kind"] == "turn_aborted") == aborted
    assert all(r["role"] == "system" for r in rows if r["kind"] == "turn_aborted")
    assert sum(r["kind"] == "turn_start" for r in rows) == kinds["task_started"]
    assert sum(r["kind"] == "turn_end" for r in rows) == kinds["task_complete"]
    sk = skipped_by_kind(db.con, p)
    assert sk.get("token_count", 0) == kinds["token_count"]
    assert sk.get("mirror:agent_message", 0) == kinds["agent_message"]
    assert sk.get("mirror:agent_reasoning", 0) == kinds["agent_reasoning"]


def test_rtchess_rows(db):
    p = _path(db, RTCHESS)
    raw = dict(read_jsonl(p))
    ev = _by_line(event_rows(db.con, p))
    sid = "019aad50-a7e6-7422-b7a8-0b384290624f"
    assert raw[1]["payload"]["id"] == sid
    # L2: harness-injected <environment_context>, no user_message event
    assert not compare_rows(
        ev[2], {"role": "user", "kind": "context", "n_records": 1, "last_line": 2, "session_id": sid}, "L2"
    ), ev[2]
    assert ev[2]["text"].startswith("<environment_context>") and ev[2]["meta"].get("paired") is False
    # L3/L4: the first human prompt, one event of two records (whole row)
    text = raw[4]["payload"]["message"]
    assert content_text(raw[3]["payload"]) == text
    assert not compare_rows(
        ev[3],
        {
            "source_format": "codex",
            "file": str(p),
            "line": 3,
            "last_line": 4,
            "part": 0,
            "n_records": 2,
            "session_id": sid,
            "ts": parse_ts(raw[3]["timestamp"]),
            "ts_end": parse_ts(raw[4]["timestamp"]),
            "ts_quality": "per_message",
            "role": "user",
            "kind": "message",
            "text": text,
            "n_tool_calls": 0,
            "tool_call_id": None,
            "finish_reason": None,
            "is_sidechain": False,
        },
        "L3",
    ), ev[3]
    assert ev[3]["meta"].get("paired") is True
    assert 4 not in ev
    # the smallest human gaps: L1097 "undo the last change", L1059 (user_message lines)
    assert ev[1096]["last_line"] == 1097 and ev[1096]["text"] == "undo the last change"
    assert ev[1058]["last_line"] == 1059 and ev[1058]["text"] == "Undo the last change"
    # the same prompt twice around the turn_aborted at L1258
    # (PROVENANCE calls it "the same prompt"; the resend re-wraps it and appends one sentence)
    assert ev[1253]["text"] == raw[1254]["payload"]["message"] and ev[1259]["text"] == raw[1260]["payload"]["message"]
    assert " ".join(ev[1259]["text"].split()).startswith(" ".join(ev[1253]["text"].split()))
    assert ev[1253]["kind"] == ev[1259]["kind"] == "message"
    assert (ev[1253]["last_line"], ev[1259]["last_line"]) == (1254, 1260)
    assert raw[1258]["payload"] == {"type": "turn_aborted", "reason": "interrupted"}
    assert not compare_rows(
        ev[1258],
        {
            "role": "system",
            "kind": "turn_aborted",
            "line": 1258,
            "last_line": 1258,
            "n_records": 1,
            "ts": parse_ts(raw[1258]["timestamp"]),
        },
        "L1258",
    ), ev[1258]
    # no task_complete in 0.60.1, no events from token_count / agent_message / agent_reasoning lines
    rows = list(ev.values())
    assert not any(r["kind"] == "turn_end" for r in rows)
    for ln, o in raw.items():
        if rkind(o) in ("event:token_count", "event:agent_message", "event:agent_reasoning"):
            assert ln not in ev, ln


def test_rtchess_tool_calls(db):
    p = _path(db, RTCHESS)
    recs = read_jsonl(p)
    n_fc = sum(rkind(o) == "function_call" for _, o in recs)
    n_cc = sum(rkind(o) == "custom_tool_call" for _, o in recs)
    assert (n_fc, n_cc) == (125, 173)
    rows = event_rows(db.con, p)
    asst = [r for r in rows if r["role"] == "assistant"]
    assert sum(r["n_tool_calls"] for r in asst) == n_fc + n_cc == 298
    call_ids = [o["payload"]["call_id"] for _, o in recs if rkind(o) in ("function_call", "custom_tool_call")]
    assert [c["id"] for r in asst for c in (r["tool_calls"] or [])] == call_ids
    outputs = [r for r in rows if r["role"] == "tool"]
    assert len(outputs) == 298 and all(r["kind"] == "tool_result" for r in outputs)
    assert sorted(r["tool_call_id"] for r in outputs) == sorted(call_ids)
    assert len(asst) == sum(1 for e in codex_model(p)[0] if e["role"] == "assistant")


def test_phase_in_meta(db):
    """0.104+: assistant messages carry phase (commentary / final_answer) -> meta.phase."""
    p = _path(db, "Krosss0001-rave-era-project/codex-session.jsonl")
    recs = dict(read_jsonl(p))
    rows = [r for r in event_rows(db.con, p) if r["role"] == "assistant"]
    by_phase: Counter[Any] = Counter()
    for r in rows:
        phases = {
            recs[ln]["payload"].get("phase")
            for ln in range(r["line"], r["last_line"] + 1)
            if rkind(recs[ln]) == "message:assistant"
        }
        if phases:
            assert r["meta"].get("phase") in phases
            by_phase[r["meta"].get("phase")] += 1
    assert by_phase == Counter({"commentary": 21, "final_answer": 6})


def test_interleaved_messages_form_one_reply(db):
    """5f file L550 / L553 (assistant, commentary) and L555 (custom_tool_call): no output between -> one event."""
    p = _path(db, "blackgirlbytes-planetfall-seed-signalkit/entire-checkpoints-v1__5f_b95c04a965_0_full.jsonl")
    raw = dict(read_jsonl(p))
    assert [rkind(raw[ln]) for ln in (550, 553, 555)] == ["message:assistant", "message:assistant", "custom_tool_call"]
    assert all(rkind(raw[ln]) in ("reasoning", "event:agent_message") for ln in (551, 552, 554))
    ev = _by_line(event_rows(db.con, p))
    e = ev[550]
    assert (e["last_line"], e["n_records"], e["n_tool_calls"]) == (555, 3, 1)
    assert e["text"] == content_text(raw[550]["payload"]) + "\n" + content_text(raw[553]["payload"])
    assert e["tool_calls"][0]["id"] == raw[555]["payload"]["call_id"]
    assert 553 not in ev and 555 not in ev


def test_codex_reingest_is_idempotent(db, h):
    files = [str(p) for p in db.files["codex"]]
    con, _ = h.ingest_dirs([db.root / "codex"])
    try:
        first = h.events_checksum(con)
        side1 = h.side_tables(con, files)
        from stallscan.ingest.run import ingest_paths

        ingest_paths(con, [str(db.root / "codex")], fmt="auto")
        assert h.events_checksum(con) == first
        assert h.side_tables(con, files) == side1
        assert first == h.events_checksum(db.con, files)
    finally:
        con.close()
