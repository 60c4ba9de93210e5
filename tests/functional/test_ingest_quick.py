"""The no-change `stallscan ingest` (stallscan.ingest.quick, answered by stallscan.run before the CLI
loads): it says what the CLI says for the same unchanged corpus, loads no typer, and hands every run with
work to do, or an option it does not read, to the CLI."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

from tests.helpers import SAMPLES, claude_line

PROBE = (
    "import sys\nsys.argv = ['stallscan', *{argv!r}]\nfrom {mod} import run\n"
    "try:\n    run()\nexcept SystemExit as e:\n    code = e.code\nelse:\n    code = 0\n"
    "print('LOADED', 'typer' in sys.modules, code, file=sys.stderr)"
)


def _run(argv: list[str], cwd, via: str = "stallscan") -> tuple[str, str, bool]:
    """(stdout, stderr without the probe line, typer loaded). via: stallscan (the console script's entry,
    with the fast path) or stallscan.cli (the CLI itself)."""
    r = subprocess.run(
        [sys.executable, "-c", PROBE.format(argv=argv, mod=via)],
        cwd=cwd,
        capture_output=True,
        text=True,
        env={"NO_COLOR": "1", "COLUMNS": "80", "TZ": "UTC", "PATH": "/usr/bin:/bin"},
    )
    *err, probe = r.stderr.rstrip("\n").split("\n")
    assert probe.startswith("LOADED "), r.stderr
    _, loaded, code = probe.split()
    assert code in ("0", "None"), r.stderr
    return r.stdout, "\n".join(err), loaded == "True"


def _corpus(tmp_path):
    src = tmp_path / "logs"
    shutil.copytree(SAMPLES / "claude-code", src / "claude-code")
    shutil.copytree(SAMPLES / "codex", src / "codex")
    return src


def _timeless(summary: dict) -> dict:
    return {k: v for k, v in summary.items() if k not in ("seconds", "mb_per_s")}


def test_unchanged_corpus_is_answered_before_the_cli_with_the_clis_answer(tmp_path):
    src, db = _corpus(tmp_path), str(tmp_path / "s.duckdb")
    first, _, loaded = _run(["ingest", str(src), "--db", db, "--json"], tmp_path)
    assert loaded and json.loads(first)["ingested"] > 0  # the first run has work: the CLI did it

    fast, _, fast_loaded = _run(["ingest", str(src), "--db", db, "--json"], tmp_path)
    cli, _, _ = _run(["ingest", str(src), "--db", db, "--json"], tmp_path, via="stallscan.cli")
    assert not fast_loaded  # answered before typer loaded
    assert _timeless(json.loads(fast)) == _timeless(json.loads(cli))
    assert json.loads(fast)["unchanged"] == json.loads(fast)["files"] > 0

    _, fast_err, _ = _run(["ingest", str(src), "--db", db], tmp_path)
    _, cli_err, _ = _run(["ingest", str(src), "--db", db], tmp_path, via="stallscan.cli")

    def words(text: str) -> list[str]:  # the summary without its timing figures
        return [w for w in text.split() if not any(c.isdigit() for c in w) or w.isdigit()]

    assert "unchanged" in fast_err and words(fast_err) == words(cli_err)


def test_a_grown_file_goes_to_the_cli(tmp_path):
    src, db = _corpus(tmp_path), str(tmp_path / "s.duckdb")
    _run(["ingest", str(src), "--db", db, "--json"], tmp_path)
    log = sorted((src / "claude-code").rglob("*.jsonl"))[0]
    with log.open("a") as fh:
        fh.write(claude_line("user", 59, session="quick-grown") + "\n")
    out, _, loaded = _run(["ingest", str(src), "--db", db, "--json"], tmp_path)
    res = json.loads(out)
    assert loaded  # (the grown file is read from its last open reply: that reply and the new line)
    assert res["ingested"] == 1 and res["unchanged"] == res["files"] - 1 and res["events"] >= 1


def test_options_it_does_not_read_go_to_the_cli(tmp_path):
    src, db = _corpus(tmp_path), str(tmp_path / "s.duckdb")
    _run(["ingest", str(src), "--db", db, "--json"], tmp_path)
    for extra in (["--strict"], ["--format", "claude_code"], ["--naive-tz", "UTC"]):
        _, _, loaded = _run(["ingest", str(src), "--db", db, "--json", *extra], tmp_path)
        assert loaded, extra
