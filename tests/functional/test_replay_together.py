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
from stallscan.report import lanes as lanes_mod
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
    for s in sections():  # which thread collects each section (a section with parts: its first part's)

        def on(c, o, collect=s.collect, name=s.name):
            collected.append((name, threading.current_thread().name))
            return collect(c, o)

        _spy(monkeypatch, s, on)
    with monkeypatch.context() as m:
        m.setattr(build, "_beside", lambda *a: None)
        after = build.build_report(one, ReportOptions(bootstrap=50))
    assert all(t == "MainThread" for _, t in collected)
    shutil.copy(request.getfixturevalue("sample_ingested_file" if corpus == "sample" else "real_ingested_file"),
                tmp_path / "three.duckdb")  # fmt: skip
    three = connect(str(tmp_path / "three.duckdb"))
    lanes = {"stallscan-boundaries", "stallscan-stalls"}
    for con, limit, stalls_on in ((two, 1_000_000, "stallscan-stalls"), (three, -1, "MainThread")):
        collected.clear()
        monkeypatch.setattr(build, "BESIDE_MAX_EVENTS", limit)
        beside = build.build_report(con, ReportOptions(bootstrap=50))
        where = dict(collected)
        assert len(collected) == len(where) == 5  # (each section collected once)
        assert where["threshold"] == "stallscan-boundaries"  # (at any size: the stall replay outlasts the boundaries')
        assert where["stalls"] == stalls_on
        if limit < 0:  # above BESIDE_MAX_EVENTS: the spare sections after both replays, as before
            assert [where[n] for n in SPARE] == ["MainThread"] * 3
        else:  # on the lane free first; the turn boundaries' section on its replay's lane only
            assert where["boundaries"] == "stallscan-boundaries"
            assert where["corpus"] in lanes and where["guard"] in lanes
        assert beside == after
        for t in (*SUMMARIES, "sweep_boot"):
            assert fingerprint(con, t) == fingerprint(one, t), t
    assert fingerprint(one, "sweep_boot")[0] > 0


@pytest.mark.parametrize("first", ["boundaries", "stalls"])
def test_the_spare_sections_go_to_the_lane_free_first(first, tmp_path, monkeypatch, sample_ingested_file):
    """The lane that ends its own sections first takes the spare ones (SPARE), one at a time; the stall
    lane never the turn boundaries' section (ON_TURNS_LANE: report.lanes.HELD). The other lane is held in its own section until
    the first has taken all it may, so the order is forced; the data equals a report's collected after both."""
    from stallscan.report import build
    from stallscan.report.registry import ReportOptions, sections

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("STALLSCAN_CONFIG", raising=False)
    monkeypatch.setenv("STALLSCAN_THREADS", "2")
    one, two = _pair(tmp_path, sample_ingested_file)
    with monkeypatch.context() as m:
        m.setattr(build, "_beside", lambda *a: None)
        after = build.build_report(one, ReportOptions(bootstrap=50))
    own = {"boundaries": "threshold", "stalls": "stalls"}  # each lane's own section
    held = own["stalls" if first == "boundaries" else "boundaries"]
    first_may = set(SPARE) - (ON_TURNS_LANE if first == "stalls" else set())
    taken: list[tuple[str, str]] = []
    done = threading.Event()  # set once the free lane has taken all it may
    for s in sections():

        def on(c, o, collect=s.collect, name=s.name):
            if name == held:
                assert done.wait(60)  # (a safeguard against a hang, not a timing check)
            out = collect(c, o)
            taken.append((name, threading.current_thread().name))
            if {n for n, t in taken if t == f"stallscan-{first}"} >= first_may:
                done.set()
            return out

        _spy(monkeypatch, s, on)
    beside = build.build_report(two, ReportOptions(bootstrap=50))
    where = dict(taken)
    assert {n for n in SPARE if where[n] == f"stallscan-{first}"} == first_may
    assert where["boundaries"] == "stallscan-boundaries"
    assert beside == after


# the sections a first report's replay lanes collect beside their own (report.lanes.LANED but the threshold and
# stall sections), and of them those held to the turn-boundary replay's lane (report.lanes.HELD)
SPARE = ("boundaries", "corpus", "guard")
ON_TURNS_LANE = {n for n in SPARE if lanes_mod.HELD.get(n) == lanes_mod.HERE}


def _spy(monkeypatch, section, on):
    """`on(c, opts, collect=...)` in place of the section's collect, and of its first part when it has parts (the
    report's lanes collect a section with parts part by part: stallscan.report.lanes)."""
    from stallscan.report.section import Parts

    monkeypatch.setattr(section, "collect", on)
    if section.parts is not None:
        first = section.parts.first
        spied = Parts(lambda c, o: on(c, o, collect=first), section.parts.rest, section.parts.join)
        monkeypatch.setattr(section, "parts", spied)


def _checkpoints_seen(tmp_path, monkeypatch, sample_ingested_file):
    """Two fresh copies of the ingested samples in tmp_path (the working directory, no config, two threads), and the
    list that report.build._checkpoint_beside appends "checkpoint" to each time it is entered."""
    from stallscan.report import build

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("STALLSCAN_CONFIG", raising=False)
    monkeypatch.setenv("STALLSCAN_THREADS", "2")
    one, two = _pair(tmp_path, sample_ingested_file)
    threads: list[str] = []
    real = build._checkpoint_beside

    def seen(con):
        threads.append("checkpoint")
        return real(con)

    monkeypatch.setattr(build, "_checkpoint_beside", seen)
    return one, two, threads


def test_a_first_report_checkpoints_beside_its_last_reads(tmp_path, monkeypatch, sample_ingested_file):
    """A first report's CHECKPOINT runs on a thread beside the listed sessions' reads (report.build._checkpoint_beside):
    no WAL is left after build_report; a checkpoint refused (a TransactionException) is left to the close and the
    data is the same; any other error is raised in the caller's thread."""
    import duckdb

    from stallscan.report import build
    from stallscan.report.registry import ReportOptions

    one, two, threads = _checkpoints_seen(tmp_path, monkeypatch, sample_ingested_file)
    data = build.build_report(one, ReportOptions(bootstrap=50))
    assert threads == ["checkpoint"]
    wal = tmp_path / "one.duckdb.wal"
    assert not wal.exists() or wal.stat().st_size == 0
    build.build_report(one, ReportOptions(bootstrap=50))  # a repeat (stamps present): no checkpoint of its own
    assert threads == ["checkpoint"]
    monkeypatch.setattr(build, "CHECKPOINT", "COMMIT")  # (a TransactionException: no transaction is active)
    assert build.build_report(two, ReportOptions(bootstrap=50)) == data
    shutil.copy(sample_ingested_file, tmp_path / "three.duckdb")
    three = connect(str(tmp_path / "three.duckdb"))
    monkeypatch.setattr(build, "CHECKPOINT", "CHECKPOINT nowhere")
    with pytest.raises(duckdb.BinderException):
        build.build_report(three, ReportOptions(bootstrap=50))


def test_above_the_beside_size_the_close_checkpoints(tmp_path, monkeypatch, sample_ingested_file):
    """Above BESIDE_MAX_EVENTS events a first report does not checkpoint beside its last reads (measured at 311 MB
    only; slower in the 10M pairs): its close does, as before, and the data is the same as below the size."""
    from stallscan.report import build
    from stallscan.report.registry import ReportOptions

    one, two, threads = _checkpoints_seen(tmp_path, monkeypatch, sample_ingested_file)
    below = build.build_report(one, ReportOptions(bootstrap=50))
    assert threads == ["checkpoint"]
    monkeypatch.setattr(build, "BESIDE_MAX_EVENTS", 10)  # (sample_logs holds 221 events)
    above = build.build_report(two, ReportOptions(bootstrap=50))
    assert threads == ["checkpoint"]
    assert above == below


@pytest.mark.parametrize("where", ["rest", "tail", "replay"])
def test_a_failure_in_a_first_reports_lanes_is_raised_and_nothing_waits(
    where, tmp_path, monkeypatch, sample_ingested_file
):
    """A first report's lanes (report.build._beside, a stallscan.report.lanes.Queue over the replays' cursors): the
    stall section's rest, or the listed sessions' timelines (on whichever lane is free), or the turn-boundary replay
    itself (the stall lane then does not wait for the sections that replay's lane holds) failing: the failure is
    raised, no lane thread is left running, and the connection still reports."""
    from stallscan.replay import boundaries as boundaries_replay
    from stallscan.report import build
    from stallscan.report import timeline as timeline_mod
    from stallscan.report.registry import ReportOptions
    from stallscan.report.section import Parts
    from stallscan.report.sections import stalls as stalls_section

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("STALLSCAN_CONFIG", raising=False)
    monkeypatch.setenv("STALLSCAN_THREADS", "2")
    one, _ = _pair(tmp_path, sample_ingested_file)

    def fails(*a, **k):
        raise ValueError("boom")

    section = stalls_section.SECTION
    with monkeypatch.context() as m:
        if where == "rest":
            m.setattr(section, "parts", Parts(section.parts.first, fails, section.parts.join))
        elif where == "tail":
            m.setattr(timeline_mod, "timeline_windows", fails)
        else:
            m.setattr(boundaries_replay, "replay_boundaries", fails)
        got: list[BaseException] = []

        def report():
            try:
                build.build_report(one, ReportOptions(bootstrap=40, timelines=True))
            except BaseException as exc:
                got.append(exc)

        t = threading.Thread(target=report)
        t.start()
        t.join(120)  # (a safeguard against a hang, not a timing check)
        assert not t.is_alive()
    assert len(got) == 1 and isinstance(got[0], ValueError)
    assert not [t for t in threading.enumerate() if t.name.startswith("stallscan-")]
    data = build.build_report(one, ReportOptions(bootstrap=40, timelines=True))
    assert data["stalls"] and data["timelines"] is not None
