"""A source file truncated to 0 bytes, or rewritten as something that is no transcript (issue 24).

Its earlier rows are replaced with none: events, skips and rejects of the file go, the `files` row says
empty / unrecognized with the line equation holding, the ingest summary names the file, and the sessions
it held are logged as changed, so the derived tables (replayed incrementally from their stamps) equal a
replay of a fresh database that ingested the same folder.
"""

from __future__ import annotations

import json
import shutil

import pytest
from typer.testing import CliRunner

from stallscan.cli import app
from stallscan.ingest.run import ingest_paths
from stallscan.replay.boundaries import replay_boundaries
from stallscan.replay.labels import label_events
from stallscan.replay.stalls import replay_stalls
from stallscan.store.db import connect
from tests.helpers import SAMPLES, restore
from tests.hostile import accounting_errors, snapshot

DERIVED = ("user_labels", "turn_boundaries", "rounds", "stalls", "turns")
# the sample folders the emptied-file cases ingest: the victim's (hermes) and two more formats beside it
# (each format is a batch of its own; all of sample_logs' would only repeat the same steps)
KINDS = ("hermes", "claude-code", "codex")


def _replay(con) -> None:
    label_events(con, config={})
    replay_boundaries(con, 2.0)
    replay_stalls(con, retry_bound=3)


def _derived(con) -> dict[str, tuple[int, int]]:
    out = {}
    for t in DERIVED:
        cols = [r[0] for r in con.execute(f"DESCRIBE {t}").fetchall() if r[0] not in ("replayed_at", "derived_at")]
        n, h = con.execute(
            f"SELECT count(*), coalesce(sum(hash(({', '.join(cols)})::VARCHAR)::HUGEINT), 0) FROM {t}"
        ).fetchone()
        out[t] = (n, int(h))
    return out


def _rows_of(con, path) -> int:
    return sum(
        con.execute(f"SELECT count(*) FROM {t} WHERE file = ?", [str(path)]).fetchone()[0]
        for t in ("events", "skipped", "rejects")
    )


@pytest.fixture(scope="module")
def ingested(tmp_path_factory):
    """(folder, saved copy): the KINDS folders ingested and replayed into a.duckdb beside them, once; each case
    restores the folder (tests.helpers.restore: same place, same mtimes) and empties its file there."""
    work = tmp_path_factory.mktemp("emptied") / "work"
    logs = work / "logs"
    for kind in KINDS:
        shutil.copytree(SAMPLES / kind, logs / kind)
    con = connect(str(work / "a.duckdb"))
    ingest_paths(con, [str(logs)])
    _replay(con)
    con.close()
    saved = work.parent / "saved"
    shutil.copytree(work, saved)
    return work, saved


@pytest.mark.parametrize("how", ["truncate", "rewrite"])
def test_emptied_file_loses_its_rows_and_derived_tables_follow(ingested, monkeypatch, how):
    tmp_path, saved = ingested
    restore(saved, tmp_path)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("STALLSCAN_CONFIG", raising=False)
    logs = tmp_path / "logs"
    victim = logs / "hermes" / "normal_session.jsonl"
    con = connect(str(tmp_path / "a.duckdb"))
    before = _rows_of(con, victim)
    assert before > 0
    sessions = {
        r[0] for r in con.execute("SELECT DISTINCT session_id FROM events WHERE file = ?", [str(victim)]).fetchall()
    }
    assert con.execute(
        "SELECT count(*) FROM turns WHERE session_id IN (SELECT unnest(?))", [list(sessions)]
    ).fetchone()[0]

    victim.write_bytes(b"" if how == "truncate" else b"this is a plain text note now\nnot a transcript\n")
    res = ingest_paths(con, [str(logs)])
    status = "empty" if how == "truncate" else "unrecognized"
    assert _rows_of(con, victim) == 0
    assert con.execute("SELECT status, n_lines FROM files WHERE path = ?", [str(victim)]).fetchone() == (status, 0)
    assert accounting_errors(con) == []
    assert res.emptied == [(str(victim), status, before)]
    _replay(con)  # incremental from the stamps: the emptied file's sessions are in the change log

    fresh = connect(str(tmp_path / "b.duckdb"))
    ingest_paths(fresh, [str(logs)])
    _replay(fresh)
    assert snapshot(con) == snapshot(fresh)
    assert _derived(con) == _derived(fresh)
    assert not con.execute(
        "SELECT count(*) FROM turns WHERE session_id IN (SELECT unnest(?))", [list(sessions)]
    ).fetchone()[0]

    again = ingest_paths(con, [str(logs)])  # booked: the next run finds it unchanged and removes nothing
    assert again.emptied == [] and again.unchanged == again.files
    fresh.close()
    con.close()  # (the next case restores the folder: no connection of this one may stay open on it)


def test_truncated_file_through_the_cli(tmp_path):
    """`: > t.jsonl` then `stallscan ingest`: exit 0, the JSON summary names the file and the rows removed."""
    t = tmp_path / "t.jsonl"
    shutil.copy(SAMPLES / "claude-code" / "session.jsonl", t)
    db = tmp_path / "d.duckdb"
    cmd = ["ingest", str(t), "--db", str(db), "--json"]

    def run(args: list[str]):  # the typer command in this process (its output and exit code are the subject)
        r = CliRunner().invoke(app, args, prog_name="stallscan", env={"STALLSCAN_CONFIG": None})
        assert r.exit_code == 0, r.stderr
        return r

    first = json.loads(run(cmd).stdout)
    written = first["events"] + sum(first["skipped"].values()) + first["rejects"]
    assert written > 0
    t.write_bytes(b"")
    out = json.loads(run(cmd).stdout)
    assert out["emptied"] == [{"path": str(t), "status": "empty", "rows_removed": written}]
    text = run(cmd[:-1]).stderr
    assert "unchanged" in text  # the third run: booked as empty, nothing more to remove
    con = connect(str(db), read_only=True)
    assert _rows_of(con, t) == 0
    assert accounting_errors(con) == []


def test_session_spread_over_files_is_renumbered(tmp_path):
    """A session whose events are in two files: emptying one leaves the other's events numbered 1..n, as a
    fresh ingest numbers them (seq follows the files' first times)."""
    from tests.helpers import claude_line, write_lines

    logs = tmp_path / "logs"
    logs.mkdir()
    write_lines(logs / "a.jsonl", [claude_line("user", 1), claude_line("assistant", 2)])
    write_lines(logs / "b.jsonl", [claude_line("user", 3), claude_line("assistant", 4)])
    con = connect(":memory:")
    ingest_paths(con, [str(logs)])
    assert con.execute("SELECT count(DISTINCT file), max(seq) FROM events WHERE session_id = 's1'").fetchone() == (2, 4)
    (logs / "a.jsonl").write_bytes(b"")
    assert ingest_paths(con, [str(logs)]).emptied == [(str(logs / "a.jsonl"), "empty", 2)]
    fresh = connect(":memory:")
    ingest_paths(fresh, [str(logs)])
    assert snapshot(con) == snapshot(fresh)
    assert con.execute("SELECT list(seq ORDER BY line) FROM events").fetchone()[0] == [1, 2]


def test_file_known_by_its_name_truncated_is_emptied(tmp_path):
    """aider's files are recognised by name even when empty: truncated to 0 bytes, the summary still says
    so, and the next run finds the file unchanged."""
    chat = tmp_path / ".aider.chat.history.md"
    chat.write_text(
        "# aider chat started at 2025-01-02 10:00:00\n\n#### add a test\n\nSure, here it is.\n\n"
        "> Tokens: 1.2k sent, 80 received.\n",
        encoding="utf-8",
    )
    con = connect(":memory:")
    ingest_paths(con, [str(chat)])
    before = _rows_of(con, chat)
    assert before > 0
    chat.write_bytes(b"")
    res = ingest_paths(con, [str(chat)])
    assert _rows_of(con, chat) == 0 and accounting_errors(con) == []
    assert res.emptied == [(str(chat), "empty", before)]
    assert ingest_paths(con, [str(chat)]).unchanged == 1
