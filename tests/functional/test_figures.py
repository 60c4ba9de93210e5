"""Issue 23, "Figures a user acts on": each figure a user would act on means one thing. Real files where
present (skipped, saying why, when absent), and a two-prompt corpus (sample_logs/hermes/normal_session.jsonl:
2 human turns, README of sample_logs)."""

from __future__ import annotations

import json
import shutil

import pytest
from typer.testing import CliRunner

from stallscan.cli import app
from stallscan.ingest.run import ingest_paths
from stallscan.store.db import connect
from tests.helpers import SAMPLES

TWO_PROMPTS = SAMPLES / "hermes" / "normal_session.jsonl"


def _ingest(tmp_path_factory, name, paths):
    db = tmp_path_factory.mktemp(name) / "f.duckdb"
    con = connect(db)
    ingest_paths(con, [str(p) for p in paths])
    con.close()
    return str(db)


@pytest.fixture(scope="module")
def real_db(tmp_path_factory, real_ingested_file):
    """The real files ingested: the session's ingest, copied (skips when they are absent)."""
    path = tmp_path_factory.mktemp("real") / "f.duckdb"
    shutil.copy(real_ingested_file, path)
    return str(path)


@pytest.fixture(scope="module")
def two_db(tmp_path_factory):
    return _ingest(tmp_path_factory, "two", [TWO_PROMPTS])


def run(*args) -> tuple[int, str, str]:
    r = CliRunner().invoke(app, list(args))
    return r.exit_code, r.stdout, r.stderr


def _report(db, *extra) -> dict:
    code, out, err = run("report", "--db", db, "--format", "json", "--bootstrap", "200", *extra)
    assert code == 0, err
    return json.loads(out)


def _item(rep, key):
    return next(i for i in rep["headline"]["items"] if i["key"] == key)


def test_threshold_advice_keeps_a_current_value_on_the_plateau(real_db):
    """Item 1 on the real files: the router's cost curve is flat around 2 s, so the advice is to keep 2 s,
    the plateau is a range holding 2 s, and the interval can hold it; no field names another value to set."""
    rep = _report(real_db)
    rec = _item(rep, "recommendation")
    curve = next(c for c in rep["threshold"]["curves"] if c["policy"] == "router" and c["group"] == "all")
    low = min(p["cost"] for p in curve["points"])
    at2 = next(p["cost"] for p in curve["points"] if p["threshold"] == 2.0)
    assert at2 == low  # read off the curve: 2 s costs the minimum
    flat = [p["threshold"] for p in curve["points"] if p["cost"] == low]
    assert rec["verdict"] == "keep" and rec["set_threshold"] == 2.0 and rec["on_plateau"] is True
    assert "threshold" not in rec  # the one field that says what to set is set_threshold
    lo, hi = rec["plateau"]
    assert lo <= min(flat) + 0.25 and max(flat) - 0.25 <= hi and lo < 2.0 < hi
    assert rec["interval"][0] <= 2.0 <= rec["interval"][1]
    assert rec["text"].startswith("Set 2 s (unchanged)") and f"{lo:.2f}–{hi:.2f} s" in rec["text"]
    sweep = next(r for r in rep["threshold"]["recommendations"] if r["policy"] == "router")
    assert sweep["threshold"] == 2.0 and sweep["verdict"] == "keep"


def test_two_prompts_are_too_few_to_recommend(two_db):
    """Item 1 on two prompts: no threshold is recommended (the base code said "0.00 s")."""
    rep = _report(two_db)
    rec = _item(rep, "recommendation")
    assert rec["verdict"] == "too few to recommend" and rec["set_threshold"] == 2.0
    assert rec["text"].startswith("Too few to recommend a threshold")
    assert "0.00 s" not in rec["text"]
    code, out, err = run("sweep", "--db", two_db, "--format", "json", "--bootstrap", "0", "--policy", "router")
    assert code == 0, err
    sw = json.loads(out)["recommendations"][0]
    assert sw["verdict"] == "too few to recommend" and sw["threshold"] == 2.0


def test_one_vocabulary_of_truth(real_db):
    """Item 2: the boundaries rows, the report's confusion, its histogram and its examples say who wrote a
    record with one column: human / automatic / tool result, qualified when the envelope says otherwise
    (Cline's "[TASK RESUMPTION]" is written when a person re-opens the task)."""
    words = {"human", "automatic", "tool result"}
    code, out, err = run("boundaries", "--db", real_db, "--errors-only", "--format", "json")
    assert code == 0, err
    rows = json.loads(out)["decisions"]
    for r in rows:
        assert r["truth"] in words
        # an error's truth is the side the router got wrong: a person's record read as automatic is human
        assert (r["truth"] == "human") == (r["error"] == "human_as_auto")
    resumed = [r for r in rows if r["excerpt"].startswith("[TASK RESUMPTION]")]
    assert resumed and all(r["truth_note"] == "human action in an automatic envelope" for r in resumed)
    rep = _report(real_db)
    b = rep["boundaries"]
    assert set(b["gap_histogram"]) <= words and set(b["confusion"]["router"]) <= words
    con = connect(real_db, read_only=True)
    humans = con.execute(
        "SELECT count(*) FROM turn_boundaries WHERE starts_request AND prev_reply_status = 'final' "
        "AND gap_s IS NOT NULL AND is_human_turn"
    ).fetchone()[0]
    con.close()
    assert sum(x["n"] for x in b["gap_histogram"]["human"]) == humans  # counted by the truth, as errors are
    for e in rep["headline"]["examples"]:
        if e["kind"] == "misread turn":
            assert e["why"].startswith(f"{e['truth']} read as ")
            if e["truth_note"]:
                assert e["truth_note"] in e["why"]


def test_examples_spread_and_open_short(real_db):
    """Item 5: the worst examples come from different sessions and harnesses, and the printed command is
    `show REF --flagged --around SEQ`: the example's event with 3 either side, not a 447-line timeline."""
    code, out, err = run("boundaries", "--db", real_db, "--errors-only", "--format", "json")
    harnesses = {r["harness"] for r in json.loads(out)["decisions"]}
    assert len(harnesses) >= 3  # the real files misread turns of several harnesses
    ex = _report(real_db)["headline"]["examples"]
    assert len(ex) == 3
    assert len({e["session_id"] for e in ex}) == 3 and len({e["harness"] for e in ex}) == 3
    for e in ex:
        assert e["show"] == f"stallscan show {e['ref']} --flagged --around {e['seq']} --db {real_db}"
        code, out, err = run(*e["show"].split()[1:], "--format", "json")
        assert code == 0, err
        shown = json.loads(out)["events"]
        assert len(shown) <= 7 and any(r["seq"] == e["seq"] and r["error"] != "none" for r in shown)


def test_gap_only_row_says_what_it_leaves_out(real_db):
    """Item 4: the sweep scores prompts only; the tool results gap-only would misread are counted beside
    its row (counted here straight from the replayed decisions) and said where the row is printed."""
    left = _report(real_db)["threshold"]["tool_results_left_out"]  # the report replays the decisions at 2 s
    con = connect(real_db, read_only=True)
    n, gap_only, router = con.execute(
        "SELECT count(*), count(*) FILTER (WHERE gap_only_error IN ('auto_as_human', 'human_as_auto')), "
        "count(*) FILTER (WHERE error IN ('auto_as_human', 'human_as_auto')) "
        "FROM turn_boundaries WHERE starts_request AND origin = 'tool_result'"
    ).fetchone()
    con.close()
    assert gap_only > router  # the real files: gap-only calls slow tool results new human turns
    assert [(r["tool_results"], r["gap-only"]["misread"], r["router"]["misread"]) for r in left] == [
        (n, gap_only, router)
    ]
    for args in (("report", "--db", real_db, "--section", "threshold"), ("sweep", "--db", real_db, "--bootstrap", "0")):
        code, out, err = run(*args)
        assert code == 0, err
        flat = " ".join(out.split())
        assert f"no row counts the {n:,} tool results: at 2 s gap-only misreads {gap_only:,} of them" in flat


def test_default_report_fits_one_80x40_screen(real_db, tmp_path):
    """Item 6: at 80 columns the default report on the real files is one 40-line screen: the answer, the
    examples with their commands, one line per section and the pointer to --full."""
    import os
    import shutil
    import subprocess
    import sys

    here = tmp_path / "r.duckdb"  # named as a user in its folder would: the show lines print it as given
    shutil.copy(real_db, here)
    env = {**os.environ, "COLUMNS": "80", "LINES": "40", "NO_COLOR": "1", "TZ": "UTC"}
    p = subprocess.run(
        [sys.executable, "-m", "stallscan", "report", "--db", here.name, "--bootstrap", "200"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert len(lines) <= 40 and all(len(x) <= 80 for x in lines), p.stdout
    flat = " ".join(p.stdout.split())
    rep = _report(str(here))
    for it in rep["headline"]["items"]:
        assert f"{it['label']}: {' '.join(it['short'].split())}" in flat
    for e in rep["headline"]["examples"]:
        assert e["show"].replace(str(here), here.name) in flat
    for title in ("Corpus", "Turn boundaries", "Stalls", "Threshold"):  # Guard: no log here, no line
        assert sum(x.startswith(f"{title}: ") for x in lines) == 1, title
    assert "Details: --full" in flat


def test_counts_name_their_population(real_db):
    """Item 3: the corpus line says which files its counts are over, and a filtered report counts the skipped
    lines of the files it reports on, not the whole database's (counted here from the tables themselves)."""
    con = connect(real_db, read_only=True)
    n_files = con.execute("SELECT count(*) FROM files").fetchone()[0]
    with_events = con.execute("SELECT count(DISTINCT file) FROM events").fetchone()[0]
    codex_skipped = con.execute(
        "SELECT count(*) FROM skipped WHERE file IN (SELECT DISTINCT file FROM events WHERE source_format = 'codex')"
    ).fetchone()[0]
    all_skipped = con.execute("SELECT count(*) FROM skipped").fetchone()[0]
    con.close()
    pop = _report(real_db)["corpus"]["population"]
    assert (pop["files_in_database"], pop["files_with_events"], pop["skipped_lines"]) == (
        n_files,
        with_events,
        all_skipped,
    )
    code, out, err = run("report", "--db", real_db, "--bootstrap", "0")
    assert code == 0, err
    assert f"events from {with_events:,} of {n_files:,} files; {all_skipped:,} lines skipped" in " ".join(out.split())
    pop = _report(real_db, "--harness", "codex")["corpus"]["population"]
    assert pop["filtered"] and pop["skipped_lines"] == codex_skipped < all_skipped
    code, out, err = run("report", "--db", real_db, "--bootstrap", "0", "--harness", "codex")
    assert code == 0, err
    assert f"{codex_skipped:,} lines skipped there" in " ".join(out.split())
