"""The assistant-side sentinels a text-only reply is (queries/replay/stall_rounds.sql: exact / prefix sentinels
looked up by a fixed-length key, stall_sentinel_keys, contains ones checked on every reply) against the rule of the
reference walk: the first sentinel by ord whose stall_rules.Prompt.matches the stripped text. Beside the library's
sentinels the test adds a contains one, an exact one ahead of a library prefix (lower ord, the same text) and a prefix
one as short as the key, a contains one ahead of a library prefix, with kinds no list holds (the rounds keep them in `uncoded`)."""

from __future__ import annotations

import pytest

from stallscan.replay import stall_data
from stallscan.replay.stall_rules import Prompt, strip
from stallscan.replay.stalls import replay_stalls
from stallscan.store.db import connect

# (ord, id, role, reacts_to, match, text, citation)
EXTRA = [
    (-1, "t.first", "sentinel", "x_first", "exact", "API Error", "test"),  # ahead of claude.api_error (prefix)
    (900, "t.contains", "sentinel", "x_contains", "contains", "ZZTOP", "test"),
    (901, "t.short", "sentinel", "x_short", "prefix", "(emp", "test"),  # sets the key's length: 4 characters
    (0, "t.contains_first", "sentinel", "x_contains_first", "contains", "QQ", "test"),  # ahead of the library's
]

TEXTS = [
    "(empty)",  # exact, and t.short's prefix: the library's ord is lower
    "  (empty)\n",  # blanks around: stripped first
    "(empty) and more",  # t.short's prefix only
    "(em",  # shorter than the key
    "API Error",  # t.first (exact, ord -1) over claude.api_error (prefix)
    "API Error: 500 overloaded",  # claude.api_error only
    "Operation interrupted: ZZTOP",  # a library prefix (ord 43) and t.contains (ord 900)
    "it says ZZTOP here",  # t.contains only
    "API Error QQ",  # t.contains_first (ord 0) over claude.api_error (prefix, ord 45)
    "No response requested.",
    "No response requested. Really",  # exact: not a match
    "All done.",  # none
    "",  # blank
    None,
]


def _insert(con, texts: list[str | None]) -> None:
    rows: list[tuple[object, ...]] = []
    for sid, text in enumerate(texts):
        for seq, (role, kind, t) in enumerate((("user", "message", "hello"), ("assistant", "message", text)), 1):
            fr = "stop" if role == "assistant" else None
            model = "gpt-x" if role == "assistant" else None
            rows.append(
                (f"s{sid}-{seq}", "openai_chat", f"/x/s{sid}.jsonl", seq, seq, 0, 1, f"s{sid}", seq, None, None, "none",
                 role, kind, t, [], 0, None, fr, fr, None, None, None, None, None, model, False, None, None, "{}")
            )  # fmt: skip
    con.executemany("INSERT INTO events VALUES (" + ",".join(["?"] * 30) + ")", rows)


def test_sentinels_match_the_reference_rule(monkeypatch: pytest.MonkeyPatch) -> None:
    install = stall_data.install

    def with_extra(con):  # the library's tables, and the test's sentinels in stall_prompts
        data = install(con)
        con.executemany("INSERT INTO stall_prompts VALUES (?, ?, ?, ?, ?, ?, ?)", EXTRA)
        return data

    monkeypatch.setattr(stall_data, "install", with_extra)
    con = connect(":memory:")
    try:
        _insert(con, TEXTS)
        replay_stalls(con, segmentation="fallback")
        prompts = [
            Prompt(i, role, reacts_to, match, text, "")
            for _, i, role, reacts_to, match, text in con.execute(
                "SELECT ord, id, role, reacts_to, match, text FROM stall_prompts WHERE role = 'sentinel' ORDER BY ord"
            ).fetchall()
        ]
        got = dict(con.execute("SELECT session_id, round_kind FROM rounds").fetchall())
        assert len(got) == len(TEXTS)
        for sid, text in enumerate(TEXTS):
            stripped = strip(text) if text is not None else None
            want = next((p.reacts_to for p in prompts if p.matches(stripped)), None)
            if want is not None:
                assert got[f"s{sid}"] == want, (text, got[f"s{sid}"], want)
            else:  # (no sentinel: a blank reply is `empty` by its own rule, the others a plain final answer)
                assert got[f"s{sid}"] == ("final" if stripped else "empty"), (text, got[f"s{sid}"])
        # every kind of match decided some reply (the table above reaches each path)
        assert {"x_first", "x_contains", "x_contains_first", "x_short", "empty", "failed", "cancelled"} <= set(
            got.values()
        )
    finally:
        con.close()
