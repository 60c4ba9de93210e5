"""Every shell example in README.md and docs/*.md runs as written.

A ```bash or ```console block is run line by line (a trailing backslash continues a line; `$ ` prompts
are dropped) with `stallscan` on PATH, in a fresh folder holding copies of sample_logs/ as `sample_logs/`
and `logs/`, HOME pointing there; the blocks of one file run in order in the same folder, so an ingest
feeds the commands after it. Every line must be a stallscan command and exit 0. A block that cannot run
here (installs, a home directory's logs, a cluster) is marked on the line before it with
`<!-- not-run: why -->`; a marker without a reason fails."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from stallscan.cli import app
from tests.helpers import ROOT, SAMPLES

DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```(\w*)\s*$")
NOT_RUN = re.compile(r"^<!--\s*not-run\b(.*?)-->\s*$")


def shell_blocks(path: Path) -> list[tuple[int, bool, list[str]]]:
    """(line of the fence, runnable?, command lines) of every bash/console block of a markdown file."""
    lines = path.read_text(encoding="utf-8").splitlines()
    out: list[tuple[int, bool, list[str]]] = []
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        lang, start = m.group(1), i
        j = i + 1
        while j < len(lines) and not lines[j].startswith("```"):
            j += 1
        if lang in ("bash", "console", "sh", "shell"):
            marker = NOT_RUN.match(lines[start - 1]) if start else None
            if marker:
                assert marker.group(1).strip(" :"), f"{path.name}:{start}: not-run marker without a reason"
            commands: list[str] = []
            for raw in lines[start + 1 : j]:
                text = raw.removeprefix("$ ")
                if commands and commands[-1].endswith("\\"):
                    commands[-1] = commands[-1][:-1] + " " + text.strip()
                elif text.strip() and not text.lstrip().startswith("#"):
                    commands.append(text.strip())
            out.append((start + 1, marker is None, commands))
        i = j + 1
    return out


BLOCKS = {p: shell_blocks(p) for p in DOCS}


def test_the_examples_are_found() -> None:
    runnable = [c for blocks in BLOCKS.values() for _, run, cmds in blocks if run for c in cmds]
    assert len(runnable) >= 15, runnable  # README's five commands and docs/usage.md's list at least
    assert all(c.startswith("stallscan ") for c in runnable), [c for c in runnable if not c.startswith("stallscan ")]


SHELL_ONLY = re.compile(r"[|&;<>`$(){}\[\]*?~!\\]")  # unquoted, these ask for a shell
QUOTED_SHELL = re.compile(r"[`$\\!]")  # what a shell still reads between double quotes


def _plain_word(word: str) -> bool:
    """A word (shlex's non-POSIX split, quotes kept) that means itself to bash as well."""
    if len(word) > 1 and word[0] == word[-1] == "'":
        return True
    if len(word) > 1 and word[0] == word[-1] == '"':
        return not QUOTED_SHELL.search(word[1:-1])
    return not SHELL_ONLY.search(word)


def in_process(cmd: str) -> tuple[list[str], str | None] | None:
    """(stallscan's arguments, the file a trailing `> FILE` names) of a plain `stallscan ...` line, or None
    when the line needs a shell (pipes, globs, variables, ...) and runs through bash instead."""
    raw = shlex.split(cmd, comments=True, posix=False)
    out_file = None
    if len(raw) >= 3 and raw[-2] == ">" and _plain_word(raw[-1]):
        raw, out_file = raw[:-2], raw[-1]
    if not raw or raw[0] != "stallscan" or not all(_plain_word(w) for w in raw):
        return None
    return shlex.split(" ".join(raw[1:])), None if out_file is None else shlex.split(out_file)[0]


@pytest.mark.parametrize("doc", [p for p in DOCS if any(run for _, run, _ in BLOCKS[p])], ids=lambda p: p.name)
def test_doc_examples_run(doc: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Plain `stallscan ...` lines (and `> FILE`) run in this process through CliRunner, with the environment
    and working folder a shell would give them (the console script's own start is the subject of the tests
    that run it as a process); a line that needs a shell runs through bash."""
    for name in ("sample_logs", "logs"):
        shutil.copytree(SAMPLES, tmp_path / name, ignore=shutil.ignore_patterns("*.py", "README.md"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("STALLSCAN_")}
    env.update(
        HOME=str(tmp_path),
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
        NO_COLOR="1",
        COLUMNS="100",
    )
    monkeypatch.chdir(tmp_path)
    runner_env: dict[str, str | None] = {k: None for k in os.environ if k.startswith("STALLSCAN_")}
    runner_env.update({k: env[k] for k in ("HOME", "NO_COLOR", "COLUMNS")})
    for line, run, commands in BLOCKS[doc]:
        if not run:
            continue
        for cmd in commands:
            plain = in_process(cmd)
            if plain is None:
                r = subprocess.run(
                    ["bash", "-c", cmd], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600
                )
                code, err = r.returncode, r.stderr
            else:
                args, out_file = plain
                res = CliRunner().invoke(app, args, prog_name="stallscan", env=runner_env)
                code, err = res.exit_code, res.stderr + (f"\n{res.exception!r}" if res.exception else "")
                if out_file is not None:
                    (tmp_path / out_file).write_text(res.stdout, encoding="utf-8")
            assert code == 0, f"{doc.name}:{line}: {cmd}\n{err[-2000:]}"
