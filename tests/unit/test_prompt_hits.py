"""The nudge / interrupt prompts a user message matches (stall_prompt_hits in queries/replay/stall_lookups.sql:
exact and prefix matches by a hash join on a fixed-length key, contains matches apart) against the rule of the
reference walk (stall_rules.Prompt.matches on the text with leading/trailing [ \\t\\n\\r] removed), over a table of
prompts and messages built for the edges of the key: texts shorter than it, prompts that share it, blanks around
the text, a prompt text that is a prefix of another's. And stall_strip, the text those matches read, against
stall_rules.strip."""

from __future__ import annotations

import duckdb

from stallscan.replay.stall_rules import Prompt, strip
from stallscan.store import sql

# (id, role, match, text): the shortest exact / prefix nudge text ("Go on.", 6 characters) sets the key's length
PROMPTS = [
    ("p_exact", "nudge", "exact", "Please continue."),
    ("p_prefix", "nudge", "prefix", "Please continue"),  # a prefix of p_exact's text: the same key
    ("p_prefix_long", "nudge", "prefix", "Please continue with the tool call"),  # shares the key too
    ("p_short", "nudge", "exact", "Go on."),  # as long as the key
    ("p_contains", "nudge", "contains", "no tool call"),
    ("p_contains_short", "nudge", "contains", "ok"),  # shorter than the key: contains only
    ("p_interrupt", "interrupt", "prefix", "[Request interrupted"),
    ("p_exact_ws", "nudge", "exact", "Go on. now"),
    ("p_auto", "automatic", "prefix", "Please"),  # not a nudge: never a hit, and not part of the key
    ("p_sentinel", "sentinel", "exact", "Go"),
]

# (kind, text) of the user messages; the rowid is the position
MESSAGES = [
    ("message", "Please continue."),  # p_exact and p_prefix, not p_prefix_long
    ("message", "  Please continue.\n"),  # blanks around: stripped before matching
    ("message", "Please continue with the tool call now"),  # both prefixes, not the exact
    ("message", "Please continu"),  # shorter than p_prefix, same key
    ("message", "Go on."),  # exactly the key
    ("message", "Go on"),  # shorter than the key
    ("message", "Go"),  # shorter than the key (the sentinel's text: not a user prompt)
    ("message", "\tGo on. now \r"),  # p_exact_ws after stripping; starts with p_short's text, which is exact
    ("message", "There was no tool call, ok?"),  # both contains
    ("message", "ok"),  # a text only as long as a contains prompt
    ("message", ""),
    ("message", None),
    ("message", "[Request interrupted by user]"),
    ("message", "Please continue. [Request interrupted"),  # holds the interrupt's prefix text, not at its start
    ("message", "please continue."),  # case differs
    ("message", "Please"),  # an automatic prompt's text
    ("tool_result", "Please continue."),  # not a user message the rule reads
    ("message", " \n\t "),  # blank
    ("message", "Please continue.\u00a0"),  # a no-break space is not stripped: a prefix match only
    ("message", "Pleasé continue."),  # a multi-byte character inside the key
]


def _hits(con: duckdb.DuckDBPyConnection) -> set[tuple[int, str, int, str]]:
    prep = sql.load("replay/stall_lookups")
    for name in ("MACRO stall_strip", "VARIABLE stall_prompt_key", "stall_prompt_hits AS"):
        con.execute(next(s for s in prep if name in s))
    rows = con.execute("SELECT rid, id, ord, prompt_role FROM stall_prompt_hits").fetchall()
    return {(int(r), i, int(o), pr) for r, i, o, pr in rows}


def test_prompt_hits_match_the_reference_rule() -> None:
    con = duckdb.connect()
    con.execute(
        "CREATE TABLE stall_prompts (ord INTEGER, id VARCHAR, role VARCHAR, reacts_to VARCHAR, match VARCHAR, "
        "text VARCHAR, citation VARCHAR)"
    )
    con.executemany(
        "INSERT INTO stall_prompts VALUES (?, ?, ?, 'dropped', ?, ?, '')",
        [(i, pid, role, match, text) for i, (pid, role, match, text) in enumerate(PROMPTS)],
    )
    con.execute("CREATE TABLE events (role VARCHAR, kind VARCHAR, text VARCHAR)")
    con.executemany("INSERT INTO events VALUES ('user', ?, ?)", MESSAGES)
    con.execute("INSERT INTO events VALUES ('assistant', 'message', 'Please continue.')")  # a reply: never a hit

    prompts = [Prompt(pid, role, "dropped", match, text, "") for pid, role, match, text in PROMPTS]
    want = {
        (rid, p.id, ord_, p.role)
        for rid, (kind, text) in enumerate(MESSAGES)
        if kind != "tool_result"
        for ord_, p in enumerate(prompts)
        if p.role in ("nudge", "interrupt") and p.matches(strip(text))
    }
    got = _hits(con)
    assert got == want
    # the cases the key could get wrong are among the hits, and the near misses are not
    assert {(0, "p_exact"), (0, "p_prefix"), (1, "p_exact"), (2, "p_prefix_long"), (2, "p_prefix")} <= {
        (r, i) for r, i, _, _ in got
    }
    assert {(4, "p_short"), (7, "p_exact_ws"), (8, "p_contains"), (8, "p_contains_short"), (12, "p_interrupt")} <= {
        (r, i) for r, i, _, _ in got
    }
    assert not any(r in (3, 5, 6, 14, 15, 16, 17, 19) for r, _, _, _ in got)
    assert {i for r, i, _, _ in got if r in (13, 18)} == {"p_prefix"}
    assert con.execute("SELECT getvariable('stall_prompt_key')").fetchone() == (6,)


def test_no_exact_or_prefix_prompt() -> None:
    """Only contains prompts: the key is empty and the contains matches are found alone."""
    con = duckdb.connect()
    con.execute(
        "CREATE TABLE stall_prompts AS SELECT 0 AS ord, 'c' AS id, 'nudge' AS role, 'dropped' AS reacts_to, "
        "'contains' AS match, 'tool' AS text, '' AS citation"
    )
    con.execute("CREATE TABLE events (role VARCHAR, kind VARCHAR, text VARCHAR)")
    con.executemany("INSERT INTO events VALUES ('user', 'message', ?)", [("a tool",), ("none",), (None,)])
    assert _hits(con) == {(0, "c", 0, "nudge")}


def test_stall_strip_is_the_reference_strip() -> None:
    """stall_strip (its shortcut compares the text with '!' and reads the last four characters) against
    stall_rules.strip, on every text of up to four characters over blanks, letters, a combining mark, a no-break
    space, a prepended sign, another control character and '!' itself (the bytes either side of the comparison)."""
    from itertools import product

    alphabet = [" ", "\t", "\n", "\r", "a", "é", "\u0301", "\u00a0", "\u0600", "\x01", "!"]
    texts = [None] + ["".join(p) for n in range(5) for p in product(alphabet, repeat=n)]
    con = duckdb.connect()
    con.execute(next(s for s in sql.load("replay/stall_lookups") if "MACRO stall_strip" in s))
    con.execute("CREATE TABLE t (i INTEGER, s VARCHAR)")
    con.executemany("INSERT INTO t VALUES (?, ?)", list(enumerate(texts)))
    got = dict(con.execute("SELECT i, stall_strip(s) FROM t").fetchall())
    assert [got[i] for i in range(len(texts))] == [strip(t) for t in texts]
