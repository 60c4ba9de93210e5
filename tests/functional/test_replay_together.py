"""The turn-boundary and stall replays at once on two connections (stallscan.replay.together) write what the
two replays write one after the other, on sample_logs and on the real files; they run only on a first
replay; a failure in one stops the other and is raised, leaving no stamp."""

from __future__ import annotations

import shutil
import threading

import pytest

from stallscan.replay import scan_batches, together
from stallscan.replay.boundaries import replay_boundaries
from stallscan.replay.labels import label_events
from stallscan.replay.stalls import replay_stalls
from stallscan.store import stamps
from stallscan.store.db import connect
from tests.replay_checks import fingerprint

DERIVED = ("user_labels", "turn_boundaries", "turn_boundary_variants", "rounds", "stalls", "turns")


def _pair(tmp_path, ingested):
    shutil.copy(ingested, tmp_path / "one.duckdb")
    shutil.copy(ingested, tmp_path / "two.duckdb")
    return connect(str(tmp_path / "one.duckdb")), connect(str(tmp_path / "two.duckdb"))


@pytest.mark.parametrize("corpus", ["sample", "real"])
def test_at_once_writes_what_one_after_the_other_writes(corpus, tmp_path, monkeypatch, request):
    monkeypatch.chdir(tmp_path)  # no stallscan.toml from the caller's directory
    monkeypatch.delenv("STALLSCAN_CONFIG", raising=False)
    monkeypatch.setenv("STALLSCAN_THREADS", "2")  # (whatever this machine's CPUs)
    # several batches in each scan while the other runs (277 events in sample_logs, about 22,000 real ones)
    monkeypatch.setenv("STALLSCAN_SCAN_BATCH_ROWS", "97" if corpus == "sample" else "4096")
    ingested = request.getfixturevalue("sample_ingested_file" if corpus == "sample" else "real_ingested_file")
    one, two = _pair(tmp_path, ingested)
    label_events(one, {})
    replay_boundaries(one, 1.5)
    replay_stalls(one, retry_bound=2)
    seconds = together.replay_together(two, 1.5, 2, config={})
    assert seconds is not None and set(seconds) == {"boundaries", "stalls"}
    for name in ("user_labels", "turn_boundaries", "stalls"):  # stamped as the callers' own calls stamp them
        assert stamps.get(two, name)["key"] == stamps.get(one, name)["key"]
    # the callers' own calls then reuse what was written
    assert replay_stalls(two, retry_bound=2).rounds == replay_stalls(one, retry_bound=2).rounds
    for t in DERIVED:
        assert fingerprint(two, t) == fingerprint(one, t), t
    assert fingerprint(one, "rounds")[0] > 0 and fingerprint(one, "turn_boundaries")[0] > 0
    # a repeat (stamps present) leaves the work to the callers: nothing run at once
    assert together.replay_together(two, 1.5, 2, config={}) is None


def test_one_cpu_or_a_stamp_runs_nothing_at_once(tmp_path, monkeypatch, sample_ingested_file):
    monkeypatch.chdir(tmp_path)
    one, _ = _pair(tmp_path, sample_ingested_file)
    monkeypatch.setenv("STALLSCAN_THREADS", "1")
    assert together.replay_together(one, 2.0, 3, config={}) is None
    assert stamps.get(one, "user_labels") and not stamps.get(one, "stalls")  # labelled, not replayed
    monkeypatch.setenv("STALLSCAN_THREADS", "2")
    replay_boundaries(one, 2.0)
    assert together.replay_together(one, 2.0, 3, config={}) is None  # turn boundaries already stamped
    assert not stamps.get(one, "stalls")


def test_a_failure_stops_the_other_and_is_raised(tmp_path, monkeypatch, sample_ingested_file):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("STALLSCAN_SCAN_BATCH_ROWS", raising=False)
    monkeypatch.setenv("STALLSCAN_MEMORY_BUDGET", "1GB")  # batches of 536,870 rows alone, half that while shared
    one, _ = _pair(tmp_path, sample_ingested_file)
    label_events(one, {})
    seen = {}

    def fails(c):
        raise ValueError("boom")

    def replays(c):
        seen["batch"] = scan_batches.batch_rows()  # inside: its share of the budget
        replay_stalls(c)

    with pytest.raises(ValueError, match="boom"):
        together.run_at_once(one, {"boundaries": fails, "stalls": replays})
    assert (seen["batch"], scan_batches.batch_rows()) == (268_435, 536_870)  # the share ends with the run
    assert not stamps.get(one, "turn_boundaries")  # nothing stamped by the failed job
    # the connection is usable afterwards, and a replay from it completes
    replay_boundaries(one, 2.0)
    assert stamps.get(one, "turn_boundaries")


SUMMARIES = ("boundary_cells", "boundary_misreads", "round_cells", "turn_cells", "signature_cells", "sweep_bins")


@pytest.mark.parametrize("corpus", ["sample", "real"])
def test_sections_collected_beside_the_replays_equal_those_collected_after(corpus, tmp_path, monkeypatch, request):
    """A first report collects the threshold and stalls sections on the replays' cursors (report.build._beside),
    above BESIDE_MAX_EVENTS events the threshold section only: the same data, summaries and stored bootstrap sums
    as a report that collects every section after both replays (_beside answering nothing)."""
    from stallscan.report import build
    from stallscan.report.registry import ReportOptions, sections

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("STALLSCAN_CONFIG", raising=False)
    monkeypatch.setenv("STALLSCAN_THREADS", "2")
    ingested = request.getfixturevalue("sample_ingested_file" if corpus == "sample" else "real_ingested_file")
    one, two = _pair(tmp_path, ingested)
    collected: list[tuple[str, str]] = []
    for s in sections():  # which thread collects each section

        def on(c, o, collect=s.collect, name=s.name):
            collected.append((name, threading.current_thread().name))
            return collect(c, o)

        monkeypatch.setattr(s, "collect", on)
    with monkeypatch.context() as m:
        m.setattr(build, "_beside", lambda *a: None)
        after = build.build_report(one, ReportOptions(bootstrap=50))
    assert all(t == "MainThread" for _, t in collected)
    shutil.copy(request.getfixturevalue("sample_ingested_file" if corpus == "sample" else "real_ingested_file"),
                tmp_path / "three.duckdb")  # fmt: skip
    three = connect(str(tmp_path / "three.duckdb"))
    for con, limit, stalls_on in ((two, 1_000_000, "stallscan-stalls"), (three, -1, "MainThread")):
        collected.clear()
        monkeypatch.setattr(build, "BESIDE_MAX_EVENTS", limit)
        beside = build.build_report(con, ReportOptions(bootstrap=50))
        assert dict(collected) == {
            "corpus": "MainThread",
            "boundaries": "MainThread",
            "threshold": "stallscan-boundaries",  # (at any size: the stall replay outlasts the boundaries')
            "stalls": stalls_on,
            "guard": "MainThread",
        }
        assert beside == after
        for t in (*SUMMARIES, "sweep_boot"):
            assert fingerprint(con, t) == fingerprint(one, t), t
    assert fingerprint(one, "sweep_boot")[0] > 0
