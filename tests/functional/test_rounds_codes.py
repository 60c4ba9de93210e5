"""rounds_core stores a reply's harness, provider and round kind as 1-based codes into fixed lists, packed in one
INTEGER (queries/replay/stall_rounds.sql), and its signature, with any value no list holds, in `uncoded`; turns_core
likewise a turn's harness, provider, delivered round kind and finish, and outcome (queries/replay/stall_turns.sql),
read as strings through the views rounds_narrow, rounds and turns:

* every file that encodes or decodes them uses the same lists;
* a value no list holds (a harness or provider a log names that the lists do not) is read back as it was, and
  the replay still agrees with the reference walk (stallscan/replay/stalls_ref.py).
"""

from __future__ import annotations

import re
from pathlib import Path

from stallscan.replay.stalls import replay_stalls
from stallscan.replay.stalls_agreement import disagreements
from stallscan.store import stamps

QUERIES = Path(__file__).resolve().parents[2] / "queries"
# the files that encode or decode the codes, and the lists each must hold (rk: round kinds, sf: harnesses,
# pv: providers, fin: finish reasons, out: turn outcomes)
READERS = {
    "replay/stall_rounds_narrow_view.sql": "rk sf pv",
    "replay/stall_replay.sql": "rk sf pv",
    "replay/stall_turns.sql": "rk sf fin out",
    "replay/stall_turns_by_seq_view.sql": "rk sf pv fin out",
    "report/cells_rounds.sql": "rk sf",
    "report/session_timeline.sql": "rk",
}


def _string_lists(path: str) -> set[tuple[str, ...]]:
    """The list literals of quoted strings in a query file (whitespace and line breaks ignored)."""
    lists = re.findall(r"\[\s*('[^']*'(?:\s*,\s*'[^']*')*)\s*\]", (QUERIES / path).read_text())
    return {tuple(re.findall(r"'([^']*)'", lst)) for lst in lists}


def test_the_code_lists_agree():
    by_first = {
        lst[0]: lst for lst in _string_lists("replay/stall_rounds.sql") | _string_lists("replay/stall_turns.sql")
    }
    lists = {"rk": by_first["tool_round"], "sf": by_first["claude_code"], "pv": by_first["unknown"]}
    lists |= {"fin": by_first["stop"], "out": by_first["answered"]}
    assert len(lists["rk"]) == 9 and len(lists["pv"]) >= 8
    # the harnesses in the order turn_boundaries codes them (one list for both tables)
    assert lists["sf"] in _string_lists("replay/turn_boundaries.sql")
    for path, names in READERS.items():
        held = _string_lists(path)
        for name in names.split():
            assert lists[name] in held, (path, name)
        assert held <= set(lists.values()), path  # (no other list: a stale copy)


def test_values_outside_the_code_lists_read_back(sample_db):
    sample_db.execute("UPDATE events SET source_format = 'a_new_format' WHERE hash(session_id) % 3 = 0")
    sample_db.execute(
        'UPDATE events SET meta = \'{"provider": "a_new_provider"}\' '
        "WHERE role = 'assistant' AND hash(session_id) % 3 = 1 AND seq % 2 = 0"
    )
    sample_db.execute(
        "UPDATE events SET finish_reason = 'a_new_finish' WHERE role = 'assistant' AND finish_reason IS NOT NULL "
        "AND hash(session_id) % 2 = 0"
    )
    stamps.forget(sample_db, "user_labels")
    stamps.forget(sample_db, "stalls")
    replay_stalls(sample_db)
    n_format, n_provider = sample_db.execute(
        "SELECT count(*) FILTER (WHERE source_format = 'a_new_format'), "
        "count(*) FILTER (WHERE provider = 'a_new_provider') FROM rounds"
    ).fetchone()
    assert n_format > 0 and n_provider > 0
    got = sample_db.execute("SELECT event_id, source_format FROM rounds ORDER BY event_id").fetchall()
    want = sample_db.execute(
        "SELECT event_id, source_format FROM events WHERE role = 'assistant' ORDER BY event_id"
    ).fetchall()
    assert got == want
    assert disagreements(sample_db) == []  # (round provider and kind, stalls, turns as the reference walk gives)
    # turns: a harness of the turn's session (the turn's first event's), the provider of its delivered round ('unknown': none), the
    # delivered reply's own finish where it logs one
    n_new, bad = sample_db.execute(
        "SELECT count(*) FILTER (WHERE t.delivered_finish = 'a_new_finish' AND t.source_format = 'a_new_format' "
        "AND t.provider = 'a_new_provider' OR t.delivered_finish = 'a_new_finish'), "
        "count(*) FILTER (WHERE NOT list_contains(e.formats, t.source_format) "
        "OR t.provider IS DISTINCT FROM coalesce(r.provider, 'unknown') "
        "OR (d.finish_reason IS NOT NULL AND t.delivered_finish IS DISTINCT FROM d.finish_reason)) "
        "FROM turns t JOIN (SELECT session_id, list(DISTINCT source_format) AS formats FROM events GROUP BY ALL) e "
        "USING (session_id) "
        "LEFT JOIN rounds r ON r.event_id = t.delivered_event_id "
        "LEFT JOIN events d ON d.event_id = t.delivered_event_id"
    ).fetchone()
    assert n_new > 0 and bad == 0
    assert sample_db.execute("SELECT count(*) FROM turns WHERE provider = 'a_new_provider'").fetchone()[0] > 0
    assert sample_db.execute("SELECT count(*) FROM turns WHERE source_format = 'a_new_format'").fetchone()[0] > 0
