"""The sweep's stored per-session cells (table sweep_bins, stallscan.sweep.bins): derived once, stamped,
replaced per changed session after an ingest (equal to a full rebuild), invalidated by the boundaries'
options, the grid and the rule libraries; and a sweep from them equals the sweep from the rows."""

from __future__ import annotations

import random
import shutil

import numpy as np
import pytest

from stallscan.ingest.run import ingest_paths
from stallscan.replay import derive
from stallscan.replay.boundaries import replay_boundaries
from stallscan.store import stamps
from stallscan.store.db import connect
from stallscan.sweep import bins
from stallscan.sweep.core import ALL_POLICIES, run_sweep, thresholds_grid
from tests.helpers import SAMPLES
from tests.replay_checks import fingerprint as _fingerprint
from tests.replay_checks import grow as _grow
from tests.replay_checks import real_append_files
from tests.replay_checks import replay_all as _replay_all


def _full(con) -> tuple[int, int]:
    stamps.forget(con, bins.TABLE)
    assert bins.refresh(con) == "full"
    return _fingerprint(con, bins.TABLE)


def test_repeat_reuses(sample_db):
    assert bins.refresh(sample_db) == "full"
    before = _fingerprint(sample_db, bins.TABLE)
    stamp = stamps.get(sample_db, bins.TABLE)
    assert bins.refresh(sample_db) == "reused"
    assert _fingerprint(sample_db, bins.TABLE) == before
    assert stamps.get(sample_db, bins.TABLE) == stamp  # a reuse writes nothing (not even a counter)


def test_cells_count_every_sweep_row(sample_db):
    bins.refresh(sample_db)
    n = sample_db.execute("SELECT sum(n) FROM sweep_bins").fetchone()[0]
    rows = sample_db.execute(
        "SELECT count(*) FROM turn_boundaries WHERE starts_request AND origin <> 'tool_result'"
    ).fetchone()[0]
    assert n == rows > 0


@pytest.mark.parametrize("change", ["threshold", "grid", "rules"])
def test_each_input_invalidates(sample_db, monkeypatch, change):
    bins.refresh(sample_db)
    if change == "threshold":
        replay_boundaries(sample_db, 3.5)
    elif change == "grid":
        monkeypatch.setattr(bins, "GRID", (0.0, 20.0, 0.05))
    else:
        monkeypatch.setattr(stamps, "rules_hash", lambda: "other rules")
    assert bins.refresh(sample_db) == "full"
    assert bins.refresh(sample_db) == "reused"


def test_stale_boundaries_are_refreshed_first(sample_db, tmp_path):
    bins.refresh(sample_db)
    extra = tmp_path / "more"
    shutil.copytree(SAMPLES / "codex", extra)
    for f in extra.rglob("*.jsonl"):
        f.write_bytes(f.read_bytes().replace(b"-", b"x"))  # other session ids: new sessions
    ingest_paths(sample_db, [str(extra)])
    assert bins.refresh(sample_db) in ("incremental", "full")
    assert stamps.get(sample_db, "turn_boundaries")["events_version"] == stamps.events_version(sample_db)
    got = _fingerprint(sample_db, bins.TABLE)
    assert got == _full(sample_db)


def _result(res):
    return (
        [(k, v) for k, v in res.recommendation.items()],
        [(c.policy, c.group, c.cost.tolist(), {k: v.tolist() for k, v in c.all.items()}) for c in res.curves],
        res.variants,
        res.rule_advice,
    )


@pytest.mark.parametrize("by", ["none", "harness", "model"])
def test_sweep_from_stored_cells_equals_sweep_from_rows(sample_db, monkeypatch, by):
    sample_db.execute("CREATE OR REPLACE TEMP TABLE scope_sessions AS SELECT DISTINCT session_id FROM events")
    t = thresholds_grid()
    stored = run_sweep(sample_db, t, by=by, policies=ALL_POLICIES, bootstrap=50, seed=3)
    assert stamps.get(sample_db, bins.TABLE) is not None  # the stored path ran
    if by == "none":  # every policy's sums stored now: the cells summed over sessions serve (none per session)
        with monkeypatch.context() as m:
            m.setattr(bins, "load_cells", None)
            summed = run_sweep(sample_db, t, by=by, policies=ALL_POLICIES, bootstrap=50, seed=3)
    monkeypatch.setattr(bins, "usable", lambda con, t: False)
    rows = run_sweep(sample_db, t, by=by, policies=ALL_POLICIES, bootstrap=50, seed=3)
    assert _result(stored) == _result(rows)
    if by == "none":
        assert _result(summed) == _result(rows)
    assert np.array_equal(stored.thresholds, rows.thresholds)


# the default run grows the real files under 1 MB; the slow tier's second seed grows them all
@pytest.mark.parametrize("seed", [1, pytest.param(2, marks=pytest.mark.slow)])
def test_incremental_equals_full_on_real_appends(tmp_path, seed, monkeypatch):
    files = real_append_files(everything=seed == 2)
    if not files:
        pytest.skip("real claude-code / codex files not found: set STALLSCAN_REAL_DATA")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(derive, "FULL_SHARE", 1.01)  # incrementally however many sessions changed
    con = connect(str(tmp_path / "inc.duckdb"))
    _replay_all(con)
    bins.refresh(con)
    modes = []
    for step in _grow(con, files, random.Random(seed), tmp_path / "corpus", steps=3 if seed == 1 else 4):
        modes.append(bins.refresh(con))
        moved = _sums(con)  # the bootstrap's sums as the refresh left them (moved along, or dropped)
        assert _fingerprint(con, bins.TABLE) == _full(con), f"step {step}"
        con.execute("CREATE OR REPLACE TEMP TABLE scope_sessions AS SELECT DISTINCT session_id FROM events")
        run_sweep(con, thresholds_grid(), policies=ALL_POLICIES, bootstrap=40, seed=3)  # sums afresh, stored
        assert moved in ({}, _sums(con)), f"step {step}"
        assert moved or modes[-1] != "incremental" or len(modes) == 1
    assert "incremental" in modes, modes
    con.close()


def _sums(con):
    from stallscan.sweep import boot

    got = boot.load(con, 40, 3, len(thresholds_grid()) + 1)
    return {p: (s.h.tolist(), s.o.tolist(), s.f.tolist()) for p, s in got.items()}


def _more_sessions(tmp_path, name, harness):
    extra = tmp_path / name
    shutil.copytree(SAMPLES / harness, extra)
    for f in extra.rglob("*.jsonl"):
        f.write_bytes(f.read_bytes().replace(b"-", b"x" if name == "more" else b"y"))  # other session ids
    return extra


def test_stored_bootstrap_sums_follow_new_sessions(sample_db, tmp_path, monkeypatch):
    """The bootstrap's sums (table sweep_boot) stored by one sweep, moved along when new sessions arrive
    (the incremental sweep_bins refresh), equal the sums computed afresh, and so do the intervals."""
    monkeypatch.setattr(derive, "FULL_SHARE", 1.01)  # incrementally however many sessions changed
    sample_db.execute("CREATE OR REPLACE TEMP TABLE scope_sessions AS SELECT DISTINCT session_id FROM events")
    t = thresholds_grid()
    run_sweep(sample_db, t, policies=ALL_POLICIES, bootstrap=40, seed=3)
    first = _sums(sample_db)
    assert set(first) == set(ALL_POLICIES)
    changed = []
    for name, harness in (("more", "codex"), ("again", "claude-code")):
        ingest_paths(sample_db, [str(_more_sessions(tmp_path, name, harness))])
        sample_db.execute("CREATE OR REPLACE TEMP TABLE scope_sessions AS SELECT DISTINCT session_id FROM events")
        assert bins.refresh(sample_db) == "incremental"
        moved = _sums(sample_db)
        changed.append(moved != first)  # the new sessions' part was added (when they have gap or fixed errors)
        kept = run_sweep(sample_db, t, policies=ALL_POLICIES, bootstrap=40, seed=3)
        sample_db.execute("DROP TABLE sweep_boot")
        fresh = run_sweep(sample_db, t, policies=ALL_POLICIES, bootstrap=40, seed=3)
        assert _sums(sample_db) == moved  # stored again by the fresh sweep: equal to the moved sums
        assert _result(kept) == _result(fresh)
        monkeypatch.setattr(bins, "usable", lambda con, t: False)
        assert _result(run_sweep(sample_db, t, policies=ALL_POLICIES, bootstrap=40, seed=3)) == _result(fresh)
        monkeypatch.undo()
        monkeypatch.setattr(derive, "FULL_SHARE", 1.01)
        first = moved
    assert any(changed)


def test_full_rebuild_drops_stored_sums_and_filters_do_not_store(sample_db):
    t = thresholds_grid()
    sample_db.execute("CREATE OR REPLACE TEMP TABLE scope_sessions AS SELECT DISTINCT session_id FROM events LIMIT 3")
    run_sweep(sample_db, t, policies=ALL_POLICIES, bootstrap=40, seed=3)
    assert _sums(sample_db) == {}  # a filtered scope is not the whole corpus: its sums are not kept
    sample_db.execute("CREATE OR REPLACE TEMP TABLE scope_sessions AS SELECT DISTINCT session_id FROM events")
    run_sweep(sample_db, t, policies=ALL_POLICIES, bootstrap=40, seed=3)
    assert _sums(sample_db) != {}
    _full(sample_db)
    assert _sums(sample_db) == {}


def test_stored_sums_without_the_zero_bins(sample_db):
    """sweep_boot keeps no row for a bin whose sums are all 0 (only the fixed counts' row, bin = bins, always):
    the sums read the same as from a table with a row for every bin (as earlier code stored them), and a set
    without its fixed counts' row is not used."""
    sample_db.execute("CREATE OR REPLACE TEMP TABLE scope_sessions AS SELECT DISTINCT session_id FROM events")
    nb = len(thresholds_grid()) + 1
    run_sweep(sample_db, thresholds_grid(), policies=ALL_POLICIES, bootstrap=40, seed=3)
    stored = _sums(sample_db)
    rows, policies = sample_db.execute("SELECT count(*), count(DISTINCT policy) FROM sweep_boot").fetchone()
    assert policies == len(ALL_POLICIES) and rows < policies * (nb + 1)  # most of the grid's bins see no gap
    zero = [(p, b, np.zeros(40, "<i8").tobytes()) for p, s in stored.items() for b in range(nb) if not _any(s, b)]
    assert zero
    sample_db.executemany(
        "INSERT INTO sweep_boot VALUES (40, 3, ?, ?, ?, ?, ?)", [(p, nb, b, z, z) for p, b, z in zero]
    )
    assert sample_db.execute("SELECT count(*) FROM sweep_boot").fetchone()[0] == policies * (nb + 1)
    assert _sums(sample_db) == stored
    gone = next(iter(stored))
    sample_db.execute("DELETE FROM sweep_boot WHERE policy = ? AND bin = ?", [gone, nb])
    assert set(_sums(sample_db)) == set(stored) - {gone}


def _any(s, b) -> bool:
    """Whether a policy's loaded sums (h, o per resample and bin) have anything in bin b."""
    return any(row[b] for row in s[0]) or any(row[b] for row in s[1])
