"""The signatures' fast miss: a tail in plain ASCII skips a signature whose every match holds a non-ASCII
character (stall_rules.needs_non_ascii, stall_sig_match.sql). Expected answers are read off the regexes."""

from __future__ import annotations

import re

import duckdb
import pytest

from stallscan.replay import stall_data
from stallscan.replay.stall_rules import load, needs_non_ascii
from stallscan.replay.stalls import match_signatures
from stallscan.store import sql


@pytest.mark.parametrize(
    ("regex", "expected"),
    [
        ("好", True),
        ("好|吗", True),  # every alternative is CJK
        ("a|好", False),  # one alternative is ASCII
        ("[一-鿿]+", True),
        ("[一-鿿]*", False),  # may match nothing
        ("[^a]", False),  # a negated class holds ASCII
        (".好", True),
        ("(?i:好)", True),
        ("(?i)\u212a", False),  # KELVIN SIGN: (?i) matches k
        ("(?i)\u017f", False),  # LONG S: (?i) matches s
        ("\u212a", True),  # without (?i) it is only itself
        ("x?(完成|好了)[。]?$", True),
        ("[?？]$", False),
        ("？|[?]", False),
        ("(ab){2}好?", False),
    ],
)
def test_needs_non_ascii(regex: str, expected: bool) -> None:
    assert needs_non_ascii(regex) is expected


def test_library_regexes_compile() -> None:
    """Every regex of the signature file compiles as Python reads it (stall_rules.load no longer compiles them)."""
    d = load()
    for regex in [s.regex for s in d.signatures] + [r for b in d.background for r in (b.tool, b.arguments) if r]:
        assert re.compile(regex, re.ASCII)


def test_library_flags() -> None:
    """Which library signatures skip ASCII tails: the Chinese / Japanese / Korean-only ones (their regexes
    hold no ASCII alternative), and no signature that can match an English reply."""
    flagged = {s.id for s in load().signatures if s.non_ascii}
    for s in load().signatures:
        if s.language in ("zh", "ja", "ko"):
            assert s.id in flagged
        if s.language == "en":
            assert s.id not in flagged
    assert {"cjk_done", "q_handoff_cjk", "q_question_cjk_mid", "q_conditional_cjk"} <= flagged
    assert not {"q_question_mark", "q_question_mid", "q_option_menu", "q_background_report"} & flagged


@pytest.mark.parametrize("by_row", [False, True])
def test_sql_skip_matches_regex_alone(by_row: bool) -> None:
    """stall_sig_match.sql with the skips, run once per distinct tail (by_row: stall_sig_match_rows.sql, the
    (tail, signature) pairs in one statement, as a replay of a handful of tails runs it), gives every reply the signatures that its
    regex alone gives on its tail (a signature with max_chars only when the reply's whole text is no longer), read
    the way queries/replay/stall_rounds.sql reads them: by the reply's tail and capped length."""
    con = duckdb.connect()
    data = stall_data.install(con)
    tails = [
        "Done: the test passes now.",
        "接下来我将运行测试。",
        "次にテストを実行します。",
        "테스트를 실행하겠습니다.",
        "I'll run the tests next.",
        "需要的话请告诉我",
        "Should I go on? 好吗",
        "\u212aelvin: let me know",
        "Let me now run the tests.",
    ]
    # each tail as a short reply, as a reply of exactly 400 characters ending with it (hermes_trailing_continue's
    # max_chars), and as a 500-character reply with the same last 400 characters: one distinct tail, two verdicts;
    # stray blanks around the text are not part of it
    full = [("-" * 398 + ". ")[len(t) - 400 :] + t for t in tails]
    texts = [(i, t) for i, t in enumerate(tails)] + [(100 + i, f) for i, f in enumerate(full)]
    texts += [(200 + i, " \n" + "x" * 100 + f + "\t") for i, f in enumerate(full)]
    con.execute("CREATE TABLE events (rid BIGINT, role VARCHAR, n_tool_calls INTEGER, text VARCHAR)")
    con.executemany("INSERT INTO events VALUES (?, 'assistant', 0, ?)", texts)
    prep = sql.load("replay/stall_lookups") + sql.load("replay/stall_rounds_prep")
    steps = (
        "MACRO stall_strip",
        "VARIABLE stall_tail_chars",
        "VARIABLE stall_cap",
        "MACRO stall_tail",
        "MACRO stall_cap",
    )
    for name in (*steps, "stall_tail_caps AS", "stall_tails AS"):
        con.execute(next(s for s in prep if name in s))
    con.execute(next(s for s in prep if "stall_tail_matches (" in s))
    assert con.execute("SELECT count(*) FROM stall_tails").fetchone() == (2 * len(tails),)
    match_signatures(con, list(enumerate(data.signatures)), by_row=by_row)
    con.execute(next(s for s in sql.load("replay/stall_rounds") if "stall_sig_hits AS" in s))
    got = set(
        con.execute(
            "SELECT e.rid, unnest(coalesce(h.sig_hits, []) || coalesce(h.veto_hits, []) || coalesce(h.wait_hits, [])) "
            "FROM events e JOIN stall_sig_hits h "
            "ON h.tail = stall_tail(stall_strip(e.text)) AND h.cap = stall_cap(stall_strip(e.text))"
        ).fetchall()
    )
    stripped = {rid: t.strip(" \t\n\r") for rid, t in texts}
    want = {
        (rid, sig.id)
        for rid, t in stripped.items()
        for sig in data.signatures
        if (sig.max_chars is None or len(t) <= sig.max_chars)
        and con.execute("SELECT regexp_matches(?, ?)", [t[-400:], sig.regex]).fetchone() == (True,)
    }
    assert got == want
    assert any(sig in {"zh_trailing_intent", "ja_trailing_intent", "ko_trailing_intent"} for _, sig in got)
    assert (8, "hermes_trailing_continue") in got
    assert (108, "hermes_trailing_continue") in got
    assert (208, "hermes_trailing_continue") not in got
