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
    """stall_sig_match.sql with the skip gives the same rows as every regex run on every tail."""
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
    ]
    con.execute("CREATE TEMP TABLE stall_atext (rid BIGINT, text_chars BIGINT, tail VARCHAR)")
    con.executemany("INSERT INTO stall_atext VALUES (?, ?, ?)", [(i, len(t), t) for i, t in enumerate(tails)])
    con.execute(next(s for s in sql.load("replay/stall_rounds_prep") if "stall_text AS" in s))
    con.execute("CREATE TEMP TABLE stall_sig_matches (rid BIGINT, ord INTEGER, id VARCHAR, kind VARCHAR)")
    for i, sig in enumerate(data.signatures):
        params = {"ord": i, "id": sig.id, "kind": sig.kind, "regex": sig.regex, "max_chars": sig.max_chars}
        sql.run(con, "replay/stall_sig_match", params)
    got = set(con.execute("SELECT rid, id FROM stall_sig_matches").fetchall())
    want = {
        (i, sig.id)
        for i, t in enumerate(tails)
        for sig in data.signatures
        if (sig.max_chars is None or len(t) <= sig.max_chars)
        and con.execute("SELECT regexp_matches(?, ?)", [t, sig.regex]).fetchone() == (True,)
    }
    assert got == want
    assert any(sig in {"zh_trailing_intent", "ja_trailing_intent", "ko_trailing_intent"} for _, sig in got)
