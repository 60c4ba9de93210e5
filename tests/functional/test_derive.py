"""Derive once, replay incrementally: derivation stamps and the incremental replay (stallscan.replay.derive).

* a stamp is invalidated by each option (threshold, retry / narrated bound, config, overrides file) and by
  the rule-library version; a repeat with the same inputs and unchanged events reuses the tables;
* after any sequence of ingests (the real files split into seeded random appends), the derived tables
  equal a full replay from scratch.
"""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import pytest

from stallscan.ingest.run import ingest_paths
from stallscan.replay import derive
from stallscan.replay.boundaries import replay_boundaries
from stallscan.replay.labels import label_events
from stallscan.replay.stalls import replay_stalls
from stallscan.store import stamps
from stallscan.store.db import connect
from tests.helpers import SAMPLES, claude_line, memory_copy, write_lines
from tests.replay_checks import fingerprint as _fingerprint
from tests.replay_checks import grow as _grow
from tests.replay_checks import real_append_files, shrink_corpus
from tests.replay_checks import real_line_files as _real_line_files
from tests.replay_checks import replay_all as _replay_all

DERIVED = ("user_labels", "turn_boundaries", "turn_boundary_variants", "rounds", "stalls", "turns")


def _stamp(con, name) -> dict:
    st = stamps.get(con, name)
    assert st is not None, f"no stamp for {name}"
    return st


@pytest.fixture
def db(tmp_path, monkeypatch, sample_ingested_file):
    """sample_logs ingested into a file of this test's own (a copy of the session's ingest: the subject here
    is what the replay derives and reuses after an ingest, not the ingest)."""
    monkeypatch.chdir(tmp_path)  # no stallscan.toml from the caller's directory
    monkeypatch.delenv("STALLSCAN_CONFIG", raising=False)
    shutil.copy(sample_ingested_file, tmp_path / "d.duckdb")
    con = connect(str(tmp_path / "d.duckdb"))
    yield con
    con.close()


@pytest.fixture
def replayed(sample_db):
    """As `db` after one replay_all with the default options: conftest's sample_db, a copy of the session's
    sample_db_file (that ingest with that replay, stamped full once), for tests whose subject is what a later
    replay reuses."""
    return sample_db


def _stamp_rows(con) -> list[tuple]:
    return con.execute(f"SELECT * FROM {stamps.STAMPS} ORDER BY name").fetchall()


def test_repeat_reuses_and_writes_nothing(replayed, monkeypatch):
    for name in ("turn_boundaries", "stalls"):
        st = _stamp(replayed, name)
        assert (st["mode"], st["n_full"]) == ("full", 1), name
    assert _stamp(replayed, "user_labels")["n_full"] == 1  # (replay_stalls asked for the same labels: reused)
    before = {t: _fingerprint(replayed, t) for t in DERIVED}
    rows = _stamp_rows(replayed)
    modes: list[str] = []
    real_run = derive.run

    def recording_run(*a, **k):
        modes.append(real_run(*a, **k))
        return modes[-1]

    monkeypatch.setattr(derive, "run", recording_run)
    _replay_all(replayed)
    _replay_all(replayed)
    assert modes and set(modes) == {"reused"}
    assert _stamp_rows(replayed) == rows  # no counter, no updated_at: a reuse writes nothing
    assert {t: _fingerprint(replayed, t) for t in DERIVED} == before


@pytest.mark.parametrize(
    "change, invalidated",
    [
        ({"threshold": 3.5}, {"turn_boundaries"}),
        ({"retry_bound": 1}, {"stalls"}),
        ({"narrated_bound": 0}, {"stalls"}),
    ],
)
def test_each_option_invalidates_its_stamp(replayed, change, invalidated):
    label_events(replayed, config={})
    replay_boundaries(replayed, change.get("threshold", 2.0))
    replay_stalls(replayed, retry_bound=change.get("retry_bound", 3), narrated_bound=change.get("narrated_bound", 2))
    for name in ("turn_boundaries", "stalls"):
        st = _stamp(replayed, name)
        assert st["n_full"] == (2 if name in invalidated else 1), name
    assert _stamp(replayed, "user_labels")["n_full"] == 1
    if "threshold" in change:
        assert replayed.execute("SELECT DISTINCT threshold FROM turn_boundaries").fetchall() == [(3.5,)]
    if "retry_bound" in change:
        assert _stamp(replayed, "stalls")["inputs"]["retry_bound"] == 1


def test_config_and_overrides_file_invalidate_labels(db, tmp_path):
    label_events(db, config={})
    label_events(db, config={})
    assert _stamp(db, "user_labels")["n_full"] == 1
    extra = {"prompts": [{"id": "t.hello", "harness": "*", "match": "prefix", "text": "hello", "citation": "t"}]}
    label_events(db, config=extra)
    assert _stamp(db, "user_labels")["n_full"] == 2
    eid = db.execute("SELECT event_id FROM user_labels LIMIT 1").fetchone()[0]
    f = tmp_path / "labels.csv"
    f.write_text(f"event_id,origin\n{eid},automatic\n")
    cfg = {"labels": {"overrides": str(f)}}
    assert label_events(db, config=cfg)["overrides"] == 1
    assert label_events(db, config=cfg)["overrides"] == 1  # reused, same answer
    assert _stamp(db, "user_labels")["n_full"] == 3
    f.write_text(f"event_id,origin\n{eid},human\n")  # same path, new content
    label_events(db, config=cfg)
    assert _stamp(db, "user_labels")["n_full"] == 4
    assert db.execute("SELECT origin FROM user_labels WHERE event_id = ?", [eid]).fetchone()[0] == "human"


def test_users_stallscan_toml_invalidates(db, tmp_path, monkeypatch):
    label_events(db)
    toml = tmp_path / "stallscan.toml"
    toml.write_text('[[prompts]]\nid = "t.x"\nharness = "*"\nmatch = "exact"\ntext = "zzz"\ncitation = "t"\n')
    label_events(db)  # ./stallscan.toml now exists
    assert _stamp(db, "user_labels")["n_full"] == 2
    label_events(db)
    assert _stamp(db, "user_labels")["n_full"] == 2
    toml.write_text(toml.read_text().replace("zzz", "yyy"))
    label_events(db)
    assert _stamp(db, "user_labels")["n_full"] == 3


def test_library_version_invalidates_every_stamp(replayed, monkeypatch):
    monkeypatch.setattr(stamps, "rules_hash", lambda: "another-library")
    _replay_all(replayed)
    for name in ("user_labels", "turn_boundaries", "stalls"):
        assert _stamp(replayed, name)["n_full"] == 2, name


def test_rules_hash_covers_the_data_files():
    from stallscan.store.stamps import ROOT

    files = {p.name for p in (ROOT / "data").glob("*.toml")}
    assert {"prompts.toml", "intent_signatures.toml", "stall_prompts.toml"} <= files
    assert len(stamps.rules_hash()) == 16


def test_writes_outside_ingest_are_not_reused(replayed):
    replayed.execute("DELETE FROM events WHERE event_id = (SELECT min(event_id) FROM events)")
    _replay_all(replayed)
    assert _stamp(replayed, "stalls")["n_full"] == 2


def test_no_change_counter_means_no_reuse(con):
    """A connection whose events were not written by ingest (tests, Spark's per-session connection)."""
    lines = [claude_line("user", 1), claude_line("assistant", 2)]
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        ingest_paths(con, [str(write_lines(Path(d) / "s.jsonl", lines))])
    con.execute("DELETE FROM stallscan_meta WHERE key = 'events_version'")
    replay_stalls(con)
    replay_stalls(con)
    assert _stamp(con, "stalls")["n_full"] == 2


def test_bare_connection_with_only_events(tmp_path, sample_ingested_file):
    """Spark's per-session replay: a fresh in-memory connection holding only an `events` table."""
    import duckdb

    src = memory_copy(sample_ingested_file)  # sample_logs ingested
    src.execute(f"COPY events TO '{tmp_path / 'e.parquet'}' (FORMAT parquet)")
    bare = duckdb.connect()
    bare.execute(f"CREATE TABLE events AS SELECT * FROM '{tmp_path / 'e.parquet'}'")
    info = replay_stalls(bare)
    assert info.rounds > 0
    assert bare.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = 'derive_stamps'").fetchone()[0] == 0


def test_report_cli_repeat_reuses(tmp_path, monkeypatch, sample_ingested_file):
    from typer.testing import CliRunner

    from stallscan.cli import app

    monkeypatch.chdir(tmp_path)
    dbp = str(tmp_path / "r.duckdb")
    shutil.copy(sample_ingested_file, dbp)  # sample_logs ingested, never replayed: the first report derives
    r = CliRunner()
    first = r.invoke(app, ["report", str(SAMPLES), "--db", dbp, "--format", "json", "--bootstrap", "50"])
    assert first.exit_code == 0, first.output
    second = r.invoke(app, ["report", "--db", dbp, "--format", "json", "--bootstrap", "50"])
    assert second.exit_code == 0
    assert json.loads(first.stdout) == json.loads(second.stdout)
    con = connect(dbp, read_only=True)
    for name in ("user_labels", "turn_boundaries", "stalls"):
        st = _stamp(con, name)
        assert st["n_full"] == 1 and st["mode"] == "full", (name, st)
    con.close()


# --- incremental replay == full replay, on the real files split into random appends ----------------


def _full_fingerprints(con) -> dict:
    for name in ("user_labels", "turn_boundaries", "stalls"):
        stamps.forget(con, name)
    _replay_all(con)
    assert _stamp(con, "stalls")["mode"] == "full"
    return {t: _fingerprint(con, t) for t in DERIVED}


# the default run grows the real files under 1 MB; the slow tier's second seed grows them all
# scratch: where the incremental runs keep their tables, an in-memory database attached beside the file (the
# runs over at most derive.MEMORY_MAX_SESSIONS sessions) or a schema of the file (the runs over more)
@pytest.mark.parametrize("scratch", ["memory", "file"])
@pytest.mark.parametrize("seed", [1, pytest.param(2, marks=pytest.mark.slow)])
def test_incremental_equals_full_on_real_appends(tmp_path, seed, scratch, monkeypatch):
    files = real_append_files(everything=seed == 2)
    if not files:
        pytest.skip("real claude-code / codex files not found: set STALLSCAN_REAL_DATA")
    monkeypatch.chdir(tmp_path)
    from stallscan.replay import derive

    monkeypatch.setattr(derive, "FULL_SHARE", 1.01)  # replay incrementally however many sessions changed
    monkeypatch.setattr(derive, "MEMORY_MAX_SESSIONS", 10**9 if scratch == "memory" else -1)
    where: set[bool] = set()
    inner = derive._incremental

    def spy(*args, **kw):
        where.add(kw["in_memory"])
        return inner(*args, **kw)

    monkeypatch.setattr(derive, "_incremental", spy)
    corpus = tmp_path / "corpus"
    con = connect(str(tmp_path / "inc.duckdb"))
    _replay_all(con)  # an empty database first
    modes = []
    for step in _grow(con, files, random.Random(seed), corpus, steps=3 if seed == 1 else 4):
        modes.append(_stamp(con, "stalls")["mode"])
        got = {t: _fingerprint(con, t) for t in DERIVED}
        assert got == _full_fingerprints(con), f"step {step}"
    assert "incremental" in modes, modes
    assert where == {scratch == "memory"}, where
    # nothing left of the scratch tables: no schema of the file, no database attached
    assert (
        con.execute("SELECT count(*) FROM duckdb_schemas() WHERE schema_name LIKE 'stallscan_inc%'").fetchone()[0] == 0
    )
    assert (
        con.execute("SELECT count(*) FROM duckdb_databases() WHERE database_name LIKE 'stallscan_inc%'").fetchone()[0]
        == 0
    )
    # and from scratch: a fresh database ingesting the final files at once
    fresh = connect(str(tmp_path / "fresh.duckdb"))
    ingest_paths(fresh, [str(corpus)])
    _replay_all(fresh)
    assert {t: _fingerprint(fresh, t) for t in DERIVED} == {t: _fingerprint(con, t) for t in DERIVED}
    con.close()
    fresh.close()
    shutil.rmtree(corpus)


def test_incremental_after_a_file_shrinks(tmp_path, monkeypatch):
    """A rewritten, shorter file removes events: their labels and rows go too (no orphans)."""
    files = _real_line_files()
    if not files:
        pytest.skip("real claude-code / codex files not found: set STALLSCAN_REAL_DATA")
    monkeypatch.chdir(tmp_path)
    from stallscan.replay import derive

    monkeypatch.setattr(derive, "FULL_SHARE", 1.01)
    con = connect(str(tmp_path / "d.duckdb"))
    shrink_corpus(tmp_path, files, con)
    _replay_all(con)
    assert _stamp(con, "user_labels")["mode"] in ("incremental", "reused")
    assert _stamp(con, "stalls")["mode"] == "incremental"
    got = {t: _fingerprint(con, t) for t in DERIVED}
    assert got == _full_fingerprints(con)
    con.close()


def test_incremental_labels_with_a_users_prompt_ids(tmp_path, monkeypatch):
    """The labels are stored as codes whose rule codes include the user's [[prompts]] ids (user_labels_rules): an
    incremental relabel of a changed session, with a config entry and an override, merges codes that read back
    as a full relabel's, and the boundaries and stalls built on them equal a full replay's."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(derive, "FULL_SHARE", 1.01)  # incremental however many sessions changed

    def bot(n: int, session: str) -> str:
        msg = {"role": "user", "content": f"ACME-BOT: run {n} done"}
        return claude_line("user", n, session, uuid=f"b{session}{n}", message=msg)

    corpus = tmp_path / "corpus"
    corpus.mkdir()
    s1 = [
        claude_line("user", 1, "s1"),
        claude_line("assistant", 2, "s1"),
        bot(3, "s1"),
        claude_line("assistant", 4, "s1"),
    ]
    s2 = [claude_line("user", 1, "s2"), claude_line("assistant", 2, "s2")]
    write_lines(corpus / "s1.jsonl", s1)
    write_lines(corpus / "s2.jsonl", s2)
    con = connect(str(tmp_path / "d.duckdb"))
    ingest_paths(con, [str(corpus)])
    gone = con.execute("SELECT event_id FROM events WHERE session_id = 's1' AND line = 1").fetchone()[0]
    (tmp_path / "labels.csv").write_text(f"event_id,origin\n{gone},automatic\n")
    cfg = {
        "prompts": [
            {"id": "acme.bot", "harness": "claude_code", "match": "prefix", "text": "ACME-BOT:", "citation": "t"}
        ],
        "labels": {"overrides": "labels.csv"},
        "_base": str(tmp_path),
    }

    def replay() -> dict:
        label_events(con, cfg)
        replay_boundaries(con, 2.0, config=cfg)
        replay_stalls(con, config=cfg)
        return {t: _fingerprint(con, t) for t in DERIVED}

    replay()
    write_lines(corpus / "s2.jsonl", [*s2, bot(3, "s2"), claude_line("assistant", 4, "s2")])
    ingest_paths(con, [str(corpus)])
    met: set[str] = set()  # the tables the incremental runs copy or merge
    inner = derive._incremental

    def spy(c, compute, outputs, upstream, *rest, **kw):
        met.update((*outputs, *upstream))
        return inner(c, compute, outputs, upstream, *rest, **kw)

    monkeypatch.setattr(derive, "_incremental", spy)
    got = replay()
    # derive keys a table by session unless EVENT_ROWS or WHOLE names it, without reading the catalog: true of
    # every table the runs met (a table without session_id keyed by session fails its DELETE)
    with_session = {
        r[0] for r in con.execute("SELECT table_name FROM duckdb_columns() WHERE column_name = 'session_id'").fetchall()
    }
    assert met and {t for t in met if t not in derive.EVENT_ROWS and t not in derive.WHOLE} <= with_session, met
    assert not (set(derive.EVENT_ROWS) | derive.WHOLE) & with_session
    assert {_stamp(con, n)["mode"] for n in ("user_labels", "turn_boundaries", "stalls")} == {"incremental"}
    rules = dict(
        con.execute(
            "SELECT e.session_id || ':' || e.line, l.origin_rule FROM user_labels l JOIN events e USING (event_id)"
        ).fetchall()
    )
    assert rules["s1:3"] == rules["s2:3"] == "acme.bot"
    assert rules["s1:1"] == "override:default_human" and rules["s2:1"] == "default_human"
    for name in ("user_labels", "turn_boundaries", "stalls"):
        stamps.forget(con, name)
    assert replay() == got
    assert _stamp(con, "user_labels")["mode"] == "full"
    con.close()


def test_incremental_scratch_leaves_out_the_views_only_there(tmp_path, monkeypatch):
    """An incremental turn-boundary run makes in its scratch schema only what its statements read (the view
    turn_boundaries_by_seq, not turn_boundaries nor turn_boundary_variants: derive.in_scratch()); a full run makes
    every view in the database. After the incremental run the database's views read the rows a full replay gives
    (a full run that left them out, or a merge that lost them, fails here)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(derive, "FULL_SHARE", 1.01)  # incremental however many sessions changed
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    s1 = [claude_line("user", 1, "s1"), claude_line("assistant", 2, "s1"), claude_line("user", 3, "s1")]
    write_lines(corpus / "s1.jsonl", s1)
    con = connect(str(tmp_path / "d.duckdb"))
    ingest_paths(con, [str(corpus)])
    seen: list[tuple[bool, set[str]]] = []  # (in_scratch, the views the current schema holds) after each compute
    inner = derive.run

    def spy(c, name, inputs, compute, *rest, **kw):
        def watched(cc):
            compute(cc)
            # (the views of the schema the search path names: the scratch's, or the database's own main)
            views = {
                r[0]
                for r in cc.execute(
                    "SELECT view_name FROM duckdb_views() WHERE NOT internal AND (database_name LIKE 'stallscan_inc%' "
                    "OR schema_name LIKE 'stallscan_inc%') = $scratch",
                    {"scratch": derive.in_scratch()},
                ).fetchall()
            }
            seen.append((derive.in_scratch(), views))

        return inner(c, name, inputs, watched if name == "turn_boundaries" else compute, *rest, **kw)

    monkeypatch.setattr(derive, "run", spy)
    label_events(con, {})
    replay_boundaries(con, 2.0)
    assert not seen[-1][0] and {"turn_boundaries", "turn_boundaries_by_seq", "turn_boundary_variants"} <= seen[-1][1]
    write_lines(corpus / "s2.jsonl", [claude_line("user", 1, "s2"), claude_line("assistant", 2, "s2")])
    ingest_paths(con, [str(corpus)])
    label_events(con, {})
    replay_boundaries(con, 2.0)
    assert _stamp(con, "turn_boundaries")["mode"] == "incremental"
    in_scratch, views = seen[-1]
    assert in_scratch and "turn_boundaries_by_seq" in views
    assert not {"turn_boundaries", "turn_boundary_variants"} & views
    assert not derive.in_scratch()  # (reset after the run)
    got = {t: _fingerprint(con, t) for t in ("turn_boundaries", "turn_boundary_variants")}
    for name in ("user_labels", "turn_boundaries"):
        stamps.forget(con, name)
    label_events(con, {})
    replay_boundaries(con, 2.0)
    assert _stamp(con, "turn_boundaries")["mode"] == "full"
    assert got == {t: _fingerprint(con, t) for t in ("turn_boundaries", "turn_boundary_variants")}
    con.close()


def test_incremental_merge_inserts_alone_only_for_sessions_new_since_the_stamp(tmp_path, monkeypatch):
    """An incremental run over sessions that had no event when its stamp was written (and no event removed since)
    inserts their rows without deleting (derive._only_new); an append to a session that had events, and a file
    rewritten shorter, delete first. Each time every derived table equals a full replay's."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(derive, "FULL_SHARE", 1.01)  # incremental however many sessions changed
    only_new: list[tuple[str, bool]] = []
    inner_run, inner_new = derive.run, derive._only_new
    name = [""]

    def run_spy(c, n, *args, **kw):
        name[0] = n
        return inner_run(c, n, *args, **kw)

    def new_spy(*args):
        only_new.append((name[0], inner_new(*args)))
        return only_new[-1][1]

    monkeypatch.setattr(derive, "run", run_spy)
    monkeypatch.setattr(derive, "_only_new", new_spy)
    corpus = tmp_path / "corpus"
    corpus.mkdir()

    def session(sid: str, n: int) -> list[str]:
        return [claude_line("user" if i % 2 else "assistant", i, sid) for i in range(1, n + 1)]

    write_lines(corpus / "s1.jsonl", session("s1", 5))
    con = connect(str(tmp_path / "d.duckdb"))

    def step() -> set[bool]:
        only_new.clear()
        ingest_paths(con, [str(corpus)])
        _replay_all(con)
        for group in ("user_labels", "turn_boundaries", "stalls"):
            assert _stamp(con, group)["mode"] == "incremental", group
        seen = {n for n, _ in only_new}
        assert {"user_labels", "turn_boundaries", "stalls"} <= seen, seen
        got = {t: _fingerprint(con, t) for t in DERIVED}
        assert got == _full_fingerprints(con)
        return {v for _, v in only_new}

    ingest_paths(con, [str(corpus)])
    _replay_all(con)
    write_lines(corpus / "s2.jsonl", session("s2", 4))  # a new session: inserted alone
    assert step() == {True}
    write_lines(corpus / "s1.jsonl", session("s1", 7))  # s1 grown: its old events had rows
    assert step() == {False}
    write_lines(corpus / "s2.jsonl", session("s2", 2))  # s2 rewritten shorter: rows of removed events
    assert step() == {False}
    write_lines(corpus / "s3.jsonl", session("s3", 3))  # a new session again
    assert step() == {True}
    n_user_tool = con.execute("SELECT count(*) FROM events WHERE role IN ('user', 'tool')").fetchall()[0][0]
    assert con.execute("SELECT count(*) FROM user_labels_narrow").fetchall()[0][0] == n_user_tool
    con.close()
