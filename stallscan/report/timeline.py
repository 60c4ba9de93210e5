"""`stallscan show SESSION`: one session's timeline, misclassified turns and stalls highlighted."""

from __future__ import annotations

import bisect
import re
import weakref
from typing import TYPE_CHECKING, Any

import duckdb

from stallscan.replay.boundaries_ref import GAP_THRESHOLD_S
from stallscan.replay.stall_rules import RETRY_BOUND
from stallscan.store import sql
from stallscan.store.errors import StallscanError

if TYPE_CHECKING:
    from rich.console import RenderableType


def _owns(root: str, sid: str) -> bool:
    """sid is root itself or one of its sidechains (root/agent-...)."""
    return sid == root or sid.startswith(root + "/")


def _ids(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Every session id, sorted: from the report's per-session rows (session_cells, stallscan.report.summary_cells)
    when they reflect the current events, else from the events."""
    from stallscan.store import stamps

    st, ev, n = stamps.with_state(con, "session_cells")
    current = st is not None and ev is not None and st["events_version"] == ev and st["n_events"] == n
    table = "session_cells" if current else "events"
    return sorted(r[0] for r in con.execute(f"SELECT DISTINCT session_id FROM {table}").fetchall())


_SPACE = re.compile(r"\s")


def _word(s: str) -> str:
    """An id or ref as one shell word: white space as "_" (aider session ids hold a space and a time)."""
    return _SPACE.sub("_", s)


def _words(ids: list[str]) -> dict[str, str]:
    """id as one word -> id (an id whose word another id already has keeps only its exact form). The ids are
    folded in one pass over them joined by NUL (not white space, so nothing crosses an id's ends) when no id
    holds one: one substitution, not one per id (0.012 CPU s at 17k sessions)."""
    joined = "\0".join(ids)
    folded = _SPACE.sub("_", joined).split("\0") if joined.count("\0") == len(ids) - 1 else map(_word, ids)
    out: dict[str, str] = {}
    for word, sid in zip(folded, ids):
        out.setdefault(word, sid)
    return out


def _with_prefix(ids: list[str], prefix: str) -> list[str]:
    i = bisect.bisect_left(ids, prefix)
    out = []
    while i < len(ids) and ids[i].startswith(prefix):
        out.append(ids[i])
        i += 1
    return out


def _resolve(ids: list[str], ref: str) -> str | list[str]:
    """The id `ref` names, or the candidates when it names none or several.

    A ref is an id, a prefix of one (a prefix matching a session and only its sidechains names the
    session), or HEAD/TAIL: the one id whose part before the first "/" starts with HEAD and whose rest
    starts with TAIL (a sidechain, written short)."""
    rows = _with_prefix(ids, ref)
    if ref in rows:
        return ref
    # a root owns every row, so it is a prefix of each and sorts first: only rows[0] can be one
    if rows and all(_owns(rows[0], x) for x in rows):
        return rows[0]
    if not rows and "/" in ref:
        head, tail = ref.split("/", 1)
        cands = [x for x in _with_prefix(ids, head) if "/" in x and x.split("/", 1)[1].startswith(tail)]
        return cands[0] if len(cands) == 1 else cands
    return rows


def resolve_session(con: duckdb.DuckDBPyConnection, session: str) -> str:
    """An exact session id or a ref `session_refs` printed (see _resolve; white space in an id may be given as
    "_", as the refs print it)."""
    ids = _ids(con)
    if session in ids:
        return session
    words = _words(ids)
    found = _resolve(sorted(words), _word(session))
    got = words[found] if isinstance(found, str) else [words[w] for w in found]
    if isinstance(got, str):
        return got
    if not got:
        raise StallscanError(f"no session {session!r}", hint="list them: stallscan sessions")
    shown = ", ".join(got[:5]) + (f" and {len(got) - 5} more" if len(got) > 5 else "")
    raise StallscanError(
        f"{session!r} matches several sessions: {shown}", hint="give more of the id (stallscan sessions)"
    )


_ID_WORDS: weakref.WeakKeyDictionary[
    duckdb.DuckDBPyConnection, tuple[tuple[int | None, int], list[str], dict[str, str], list[str]]
] = weakref.WeakKeyDictionary()


def _id_words(con: duckdb.DuckDBPyConnection) -> tuple[list[str], dict[str, str], list[str]]:
    """(every session id sorted, _words of them, the words sorted), kept for the connection while the events
    are the same (a report asks three times: its sections' lists and its own; each read and folded every
    session id, 0.1 s of CPU at 17k sessions). Weakly keyed: it goes with the connection."""
    from stallscan.store import stamps

    state = stamps.with_state(con)[1:]
    got = _ID_WORDS.get(con)
    if got is None or got[0] != state:
        all_ids = _ids(con)
        words = _words(all_ids)
        got = _ID_WORDS[con] = (state, all_ids, words, sorted(words))
    return got[1], got[2], got[3]


def session_refs(con: duckdb.DuckDBPyConnection, ids: list[str] | None = None, min_len: int = 8) -> dict[str, str]:
    """The shortest ref (at least `min_len` characters a part) that `resolve_session` opens as each
    session: a plain prefix, or for ids with a "/" (sidechains) HEAD/TAIL when that is shorter. A ref is one
    shell word: white space in an id is written "_" (resolve_session reads it back)."""
    all_ids, words, keys = _id_words(con)
    want = all_ids if ids is None else sorted(set(ids))
    return {sid: _ref(keys, _word(sid), min_len) if words.get(_word(sid)) == sid else sid for sid in want}


def _ref(all_ids: list[str], sid: str, min_len: int) -> str:
    best = sid
    for n in range(min(min_len, len(sid)), len(sid)):
        if _resolve(all_ids, sid[:n]) == sid:
            best = sid[:n]
            break
    if "/" in sid:
        head, tail = sid.split("/", 1)
        for t in range(min(min_len, len(tail)), len(tail) + 1):
            ref = f"{head[: min(min_len, len(head))]}/{tail[:t]}"
            if len(ref) >= len(best):
                break
            if _resolve(all_ids, ref) == sid:
                best = ref
                break
    return best


def timeline(
    con: duckdb.DuckDBPyConnection,
    session: str,
    threshold: float = GAP_THRESHOLD_S,
    retry_bound: int = RETRY_BOUND,
    config: str | None = None,
) -> tuple[str, list[dict[str, Any]]]:
    """(session id, rows) with labels (of `config`, else the default config), boundary decisions and stall
    replay computed if missing."""
    from stallscan.replay.boundaries import replay_boundaries
    from stallscan.replay.labels import label_events
    from stallscan.replay.stalls import replay_stalls

    sid = resolve_session(con, session)
    label_events(con, config)
    replay_boundaries(con, threshold, summary=False)
    replay_stalls(con, retry_bound=retry_bound, config=config)
    rows = _timelines(con, [sid]).get(sid, [])
    _excerpts(con, rows)
    for r in rows:
        r["ts"] = r["ts"].isoformat() if r["ts"] is not None else None
        r["gap_s"] = round(r["gap_s"], 3) if r["gap_s"] is not None else None
    return sid, rows


def timeline_table(sid: str, rows: list[dict[str, Any]]) -> RenderableType:
    """The timeline as a table that fits the terminal (columns dropped by priority, numbers never cut)."""
    from stallscan.report.fit import Col, fit_table

    table: list[list[str]] = []
    styles: list[str | None] = []

    def skipped(n: int) -> None:
        table.append(["", "", "", "", "…", "", "", "", f"{n:,} left out"])
        styles.append("dim")

    for r in rows:
        if r.get("skipped_before"):
            skipped(r["skipped_before"])
        flag, style = "", None
        if r["error"] in ("auto_as_human", "human_as_auto"):
            flag, style = r["error"].replace("_as_", " as "), "bold red"
        if r["stall_outcome"]:
            flag = (flag + "; " if flag else "") + f"stall {r['stall_index']}: {r['stall_outcome']}"
            style = "bold red" if r["stall_outcome"] == "silent_plan_as_answer" else (style or "yellow")
        origin = who(r)
        decision = f"{r['decision']} ({r['decided_by']})" if r["decision"] else ""
        table.append(
            [
                str(r["seq"]),
                str(r["line"]),
                (r["ts"] or "-")[5:23].replace("T", " "),
                "" if r["gap_s"] is None else f"{r['gap_s']:.3f}",
                r["role"],
                origin,
                decision,
                flag,
                r["excerpt"] or "",
            ]
        )
        styles.append(style)
        if r.get("skipped_after"):
            skipped(r["skipped_after"])
    spec = [
        Col("seq", keep=40),
        Col("line", keep=85),
        Col("time (UTC)", "id", 60),
        Col("gap s", keep=80),
        Col("role", "id", 90),
        Col("origin / round", "text", 70, min=9, max=24),
        Col("decision", "text", 88, min=10, max=24),
        Col("flag", "text", 95, min=12, max=40),
        Col("text", "text", 75, min=12, max=60),
    ]
    out: RenderableType = fit_table(spec, table, title=f"session {sid}", styles=styles)
    return out


def who(r: dict[str, Any]) -> str:
    """The timeline's "origin / round" cell: a user-role record's truth (with its envelope's qualifier), a
    reply's round kind and calls."""
    out = r.get("truth") or r.get("round_kind") or r.get("kind") or ""
    if r.get("truth_note"):
        out = f"{out} ({NOTE_SHORT.get(r['truth_note'], r['truth_note'])})"
    if r.get("role") == "assistant" and r.get("n_tool_calls"):
        out = f"{out} ({r['n_tool_calls']} call{'s' if r['n_tool_calls'] > 1 else ''})"
    return str(out)


def flagged(r: dict[str, Any]) -> bool:
    return r.get("error") in ("auto_as_human", "human_as_auto") or bool(r.get("stall_outcome"))


NOTE_SHORT = {  # truth_note (queries/store/truth_macros.sql) as the timeline's narrow column shows it
    "human action in an automatic envelope": "automatic envelope",
    "human feedback in a tool result": "in a tool result",
}
CONTEXT = 3  # events kept either side of a flagged or chosen event by `show --flagged` / `--around`


def focus(
    rows: list[dict[str, Any]], flagged_only: bool = False, around: int | None = None, context: int = CONTEXT
) -> list[dict[str, Any]]:
    """The rows `show` prints: with `flagged_only`, the flagged events (misread turns, stalls) with `context`
    events either side; with `around` (a seq), only the events within `context` of that one, which wins over
    `flagged_only` (the report's examples print both: their event is a flagged one). A row that follows left
    out events carries `skipped_before` (how many), the last row `skipped_after`: every gap is said where it
    is."""
    if not flagged_only and around is None:
        return rows
    if around is not None and not any(r["seq"] == around for r in rows):
        raise StallscanError(f"no event with seq {around} in this session", hint="the seq column of stallscan show")
    centres = [i for i, r in enumerate(rows) if (around is None or r["seq"] == around)]
    if flagged_only and around is None:
        centres = [i for i in centres if flagged(rows[i])]
    keep = sorted({j for i in centres for j in range(max(0, i - context), min(len(rows), i + context + 1))})
    out, last = [], -1
    for i in keep:
        r = dict(rows[i])
        if i - last > 1:
            r["skipped_before"] = i - last - 1
        out.append(r)
        last = i
    if out and last < len(rows) - 1:
        out[-1]["skipped_after"] = len(rows) - 1 - last
    return out


def _timelines(con: duckdb.DuckDBPyConnection, sids: list[str]) -> dict[str, list[dict[str, Any]]]:
    """Each session's timeline rows (report/session_timeline.sql), by session id, in one statement; the
    rows carry their event_id and rowid (private: _excerpts adds the excerpt and drops them)."""
    cur = sql.query(con, "report/session_timeline", {"sessions": list(sids)})
    cols = [d[0] for d in cur.description]
    out: dict[str, list[dict[str, Any]]] = {}
    for r in cur.fetchall():
        row = dict(zip(cols, r))
        out.setdefault(row.pop("session_id"), []).append(row)
    return out


def _excerpts(con: duckdb.DuckDBPyConnection, rows: list[dict[str, Any]]) -> None:
    """Give each row its excerpt (report/timeline_excerpts.sql), read for these rows only."""
    got = dict(sql.query(con, "report/timeline_excerpts", {"rows": [r["event_rowid"] for r in rows]}).fetchall())
    for r in rows:
        del r["event_id"]
        r["excerpt"] = got.get(r.pop("event_rowid"))


def timeline_windows(
    con: duckdb.DuckDBPyConnection, sids: list[str], context: int = 3, cap: int = 200
) -> dict[str, dict[str, Any]]:
    """Each session's timeline near what it flags (each flagged row with `context` rows either side), from
    the tables the report already built, all read in one statement; `skipped` counts the rows left out."""
    found = _timelines(con, sids)
    out = {sid: _window(found.get(sid, []), context, cap) for sid in dict.fromkeys(sids)}
    _excerpts(con, [r for w in out.values() for r in w["rows"]])
    return out


def _window(rows: list[dict[str, Any]], context: int, cap: int) -> dict[str, Any]:
    near: set[int] = set()
    for i, r in enumerate(rows):
        if flagged(r):
            near.update(range(max(0, i - context), min(len(rows), i + context + 1)))
    keep = sorted(near)[:cap] if near else list(range(min(len(rows), cap)))
    out = []
    for i in keep:
        r = rows[i]
        r["ts"] = r["ts"].isoformat() if r["ts"] is not None else None
        r["gap_s"] = round(r["gap_s"], 3) if r["gap_s"] is not None else None
        r["excerpt"] = None  # (its place in the row; _excerpts reads it for the kept rows only)
        r["flagged"] = flagged(r)
        out.append(r)
    return {"events": len(rows), "skipped": len(rows) - len(out), "rows": out}
