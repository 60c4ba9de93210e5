"""The signatures' fast miss: a tail in plain ASCII skips a signature whose every match holds a non-ASCII
character (stall_rules.needs_non_ascii, stall_sig_match.sql). Expected answers are read off the regexes."""

from __future__ import annotations

import duckdb
import pytest

from stallscan.replay import stall_data
from stallscan.replay.stall_rules import load, needs_non_ascii
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


def test_sql_skip_matches_regex_alone() -> None:
    """stall_sig_match.sql with the skips, run once per distinct tail, gives every reply the signatures that its
    regex alone gives on its tail (a signature with max_chars only when the reply's whole text is no longer)."""
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
    # the same tails again on replies longer than hermes_trailing_continue's max_chars (400): one distinct tail,
    # two verdicts
    rows = [(i, len(t), t) for i, t in enumerate(tails)] + [(100 + i, 500, t) for i, t in enumerate(tails)]
    con.execute("CREATE TEMP TABLE stall_atext (rid BIGINT, text_chars BIGINT, tail VARCHAR)")
    con.executemany("INSERT INTO stall_atext VALUES (?, ?, ?)", rows)
    prep = sql.load("replay/stall_rounds_prep")
    for name in ("stall_text AS", "stall_tails AS", "stall_tail_matches ("):
        con.execute(next(s for s in prep if name in s))
    assert con.execute("SELECT count(*) FROM stall_tails").fetchone() == (len(tails),)
    for i, sig in enumerate(data.signatures):
        params = {"ord": i, "id": sig.id, "kind": sig.kind, "regex": sig.regex, "max_chars": sig.max_chars}
        sql.run(con, "replay/stall_sig_match", params)
    con.execute(next(s for s in sql.load("replay/stall_rounds") if "stall_sig_hits AS" in s))
    got = set(
        con.execute(
            "SELECT rid, unnest(coalesce(sig_hits, []) || coalesce(veto_hits, []) || coalesce(wait_hits, [])) "
            "FROM stall_sig_hits"
        ).fetchall()
    )
    want = {
        (rid, sig.id)
        for rid, n_chars, t in rows
        for sig in data.signatures
        if (sig.max_chars is None or n_chars <= sig.max_chars)
        and con.execute("SELECT regexp_matches(?, ?)", [t, sig.regex]).fetchone() == (True,)
    }
    assert got == want
    assert any(sig in {"zh_trailing_intent", "ja_trailing_intent", "ko_trailing_intent"} for _, sig in got)
    assert (8, "hermes_trailing_continue") in got
    assert (108, "hermes_trailing_continue") not in got
