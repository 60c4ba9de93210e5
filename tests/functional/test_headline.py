"""The headline: one function, the same figures in every format, one definition of each count, and
example commands that really open their session (sample_logs and, where present, the real files)."""

from __future__ import annotations

import html
import json
import re
import shutil

import pytest
from typer.testing import CliRunner

from stallscan.cli import app
from stallscan.report.headline import add_provider, headline
from stallscan.report.timeline import resolve_session, session_refs
from stallscan.store.db import connect
from tests.helpers import memory_copy


@pytest.fixture(scope="module", params=["sample", "real"])
def db(request, tmp_path_factory):
    """The run's databases, copied (no test here has the replay as its subject): sample_logs ingested and
    replayed (sample_db_file), the real files ingested and reported once (reported_file)."""
    if request.param == "sample":
        path = tmp_path_factory.mktemp("sample") / "h.duckdb"
        shutil.copy(request.getfixturevalue("sample_db_file"), path)
        return str(path)
    request.getfixturevalue("real_ingested_file")  # (skips when the real files are absent)
    path = tmp_path_factory.mktemp("real") / "h.duckdb"
    shutil.copy(request.getfixturevalue("reported_file"), path)
    return str(path)


def run(*args) -> tuple[int, str, str]:
    r = CliRunner().invoke(app, list(args))
    return r.exit_code, r.stdout, r.stderr


def _report(db) -> dict:
    code, out, err = run("report", "--db", db, "--format", "json", "--bootstrap", "100")
    assert code == 0, err
    return json.loads(out)


def test_one_definition_of_misread_turns(db):
    """boundaries --errors-only, the boundaries footer, sweep and the report's headline count the same turns:
    the differences are named populations (prompts vs tool results), not three unexplained numbers."""
    rep = _report(db)
    mis = next(i for i in rep["headline"]["items"] if i["key"] == "misread")
    code, out, err = run("boundaries", "--db", db, "--errors-only", "--format", "json")
    assert code == 0
    listed = json.loads(out)["decisions"]
    assert mis["misread"] == len(listed)
    tool = [r for r in listed if r["origin"] == "tool_result"]
    assert mis["tool_results"]["misread"] == len(tool)
    assert mis["prompts"]["misread"] == len(listed) - len(tool)
    code, out, err = run("boundaries", "--db", db)
    assert f"{mis['misread']:,} misread turns of {mis['records']:,} records" in " ".join(err.split())
    code, out, err = run("sweep", "--db", db, "--format", "json", "--bootstrap", "0", "--policy", "router")
    sw = json.loads(out)
    at2 = sw["recommendations"][0]["at_2s"]
    assert sw["recommendations"][0]["policy"] == "router"
    assert at2["auto_as_human"] + at2["human_as_auto"] == mis["prompts"]["misread"]
    assert sw["misread_at_2s"]["misread"] == mis["misread"]
    assert sw["recommendations"][0]["n_events"] == mis["prompts"]["records"]


def test_recommendation_says_when_moving_removes_nothing(db):
    rep = _report(db)
    rec = next(i for i in rep["headline"]["items"] if i["key"] == "recommendation")
    if rec["verdict"] != "too few to recommend":
        if rec["cost"] >= rec["cost_at_current"]:
            assert rec["verdict"] == "keep" and rec["set_threshold"] == rec["current_threshold"]
        else:
            assert rec["verdict"] == "move" and rec["set_threshold"] != rec["current_threshold"]
    by_rule = rec["errors_by_rule"]
    assert sum(by_rule.values()) == next(i for i in rep["headline"]["items"] if i["key"] == "misread")["misread"]
    top = max(by_rule, key=by_rule.get)
    assert f"{by_rule[top]:,} of" in rec["text"]


def test_headline_opens_every_format(db):
    rep = _report(db)
    items = rep["headline"]["items"]
    assert list(rep)[:2] == ["report_version", "headline"]
    md = run("report", "--db", db, "--format", "markdown", "--bootstrap", "100")[1]
    page = run("report", "--db", db, "--format", "html", "--bootstrap", "100")[1]
    term = run("report", "--db", db, "--bootstrap", "100")[1]
    flat = " ".join(term.split())
    full = " ".join(run("report", "--db", db, "--bootstrap", "100", "--full")[1].split())
    for it in items:
        assert it["text"] in md
        assert html.escape(it["text"], quote=False) in page
        assert " ".join(it["text"].split()) in full
        assert " ".join(it["short"].split()) in flat  # the default terminal report: one screen
    for e in rep["headline"]["examples"]:
        assert e["show"] in md and html.escape(e["show"]) in page and e["show"] in flat
    assert md.index("## The answer") < md.index("## Corpus")
    assert term.index("The answer") < term.index("Corpus")
    assert "{'" not in md and "': " not in md  # no Python reprs


def test_example_commands_open_their_session(db):
    rep = _report(db)
    assert rep["headline"]["examples"], "the corpus has misread turns or silent endings to show"
    for e in rep["headline"]["examples"]:
        args = e["show"].split()[2:]
        ref = args[0].strip("'")
        code, out, err = run("show", ref, "--db", db, "--format", "json")
        assert code == 0, err
        assert json.loads(out)["session_id"] == e["session_id"]


def test_every_printed_ref_opens_its_session(db):
    con = connect(db, read_only=True)
    refs = session_refs(con)
    assert refs
    for sid, ref in refs.items():
        assert resolve_session(con, ref) == sid
        assert len(ref) <= len(sid)
    con.close()


def test_readme_prefix_opens_the_session_not_its_sidechains(real_ingested_file):
    con = memory_copy(real_ingested_file)  # the real files ingested (the session's ingest)
    ids = [
        r[0] for r in con.execute("SELECT DISTINCT session_id FROM events WHERE session_id LIKE '258c7280%'").fetchall()
    ]
    if not ids:
        pytest.skip("session 258c7280 not in this copy of the real data")
    main = min(ids, key=len)
    assert len(ids) > 1 and all(i == main or i.startswith(main + "/") for i in ids)  # sidechains exist
    assert resolve_session(con, "258c7280") == main
    refs = session_refs(con, ids)
    assert refs[main] == "258c7280"
    for sid in ids:
        assert resolve_session(con, refs[sid]) == sid


def test_extension_point_adds_lines():
    data = {"options": {"threshold": 2.0}}

    def extra(d):
        return [{"key": "guard", "label": "Guard", "text": "3 hooks fired."}]

    add_provider(extra)
    try:
        h = headline(data)
        assert h["items"][-1]["text"] == "3 hooks fired."
    finally:
        from stallscan.report import headline as mod

        mod.PROVIDERS.remove(extra)


def test_sample_headline_counts_the_readme_cases(sample_ingested_file):
    """sample_logs/README.md documents continue_prompts L18 (automatic read as human, 13.8 s) and L22 (human
    read as automatic, 0.9 s): both are among the misread turns the headline counts; the silent figure
    counts the same endings the stalls section lists."""
    con = memory_copy(sample_ingested_file)  # sample_logs ingested
    from stallscan.report.build import build_report
    from stallscan.report.registry import ReportOptions

    data = build_report(con, ReportOptions(bootstrap=0, limit=100))
    items = {i["key"]: i for i in data["headline"]["items"]}
    mis = {(r["session_id"], r["line"]): r["error"] for r in data["boundaries"]["misclassified"]}
    assert mis[("continue_prompts", 18)] == "auto_as_human" and mis[("continue_prompts", 22)] == "human_as_auto"
    assert items["misread"]["misread"] == len(mis)
    assert re.search(rf"\b{len(mis)} of {items['misread']['records']}\b", items["misread"]["text"])
    assert items["silent"]["silent"] + items["silent"]["exhausted"] == len(data["stalls"]["silent_endings"])
