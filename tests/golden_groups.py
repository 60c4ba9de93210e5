"""Golden transcripts ingested together: a handful of ingests and replays serve many cases (plain helpers).

Each transcript goes in as <case>.jsonl beside others whose sessions it does not share (the replays keep
sessions apart), so each case reads its own rows by `events.file`. Transcripts naming the same session id go
in different groups; ingest_group asserts that no session spans two files.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterable
from pathlib import Path
from typing import Any

SESSION_KEYS = ("sessionId", "session_id", "conversation_id")  # record fields naming a session (else: the stem)


def named_sessions(transcript: Path) -> set[str]:
    """The session ids a transcript's records name (a transcript naming none is keyed by its file's stem)."""
    names: set[str] = set()
    for line in transcript.read_text(encoding="utf-8").splitlines():
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        if isinstance(rec, dict):
            names |= {str(rec[k]) for k in SESSION_KEYS if rec.get(k) is not None}
    return names


def session_groups(transcripts: dict[str, Path]) -> list[list[str]]:
    """The cases in groups of transcripts naming no common session id (first fit, in the order given)."""
    out: list[tuple[list[str], set[str]]] = []
    for case, path in transcripts.items():
        names = named_sessions(path)
        slot = next((g for g in out if not g[1] & names), None)
        if slot is None:
            slot = ([], set())
            out.append(slot)
        slot[0].append(case)
        slot[1].update(names)
    return [g[0] for g in out]


def ingest_group(con: Any, folder: Path, transcripts: dict[str, Path]) -> dict[str, str]:
    """Copy each transcript to folder/<case>.jsonl, ingest the folder, and return case -> `events.file`."""
    from stallscan.ingest.run import ingest_paths

    for case, path in transcripts.items():
        shutil.copy(path, folder / f"{case}.jsonl")
    res = ingest_paths(con, [str(folder)])
    assert res.rejects == 0
    shared = con.execute("SELECT session_id FROM events GROUP BY session_id HAVING count(DISTINCT file) > 1")
    assert shared.fetchall() == [], "two transcripts of one group share a session: add its field to SESSION_KEYS"
    files = {Path(f).stem: f for (f,) in con.execute("SELECT DISTINCT file FROM events").fetchall()}
    assert sorted(files) == sorted(transcripts), "a transcript without events"
    return files


def problems_by_file(con: Any, problems: Iterable[str]) -> dict[str, list[str]]:
    """A reference check's problems over a group, by `events.file`: those naming one of the file's sessions
    (at their start, or quoted in a key) or events; those naming no file's go to every file."""
    keys: dict[str, tuple[set[str], set[str]]] = {}
    for file, session, event in con.execute("SELECT file, session_id, event_id FROM events").fetchall():
        sessions, events = keys.setdefault(file, (set(), set()))
        sessions.add(session)
        events.add(event)

    def about(p: str, sessions: set[str], events: set[str]) -> bool:
        return any(p.startswith((f"{s}:", f"{s} ")) or repr(s) in p for s in sessions) or any(e in p for e in events)

    problems = list(problems)
    named = {f: [p for p in problems if about(p, *k)] for f, k in keys.items()}
    loose = [p for p in problems if not any(p in ps for ps in named.values())]
    return {f: ps + loose for f, ps in named.items()}
