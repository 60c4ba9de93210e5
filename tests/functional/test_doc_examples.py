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
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

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


@pytest.mark.parametrize("doc", [p for p in DOCS if any(run for _, run, _ in BLOCKS[p])], ids=lambda p: p.name)
def test_doc_examples_run(doc: Path, tmp_path: Path) -> None:
    for name in ("sample_logs", "logs"):
        shutil.copytree(SAMPLES, tmp_path / name, ignore=shutil.ignore_patterns("*.py", "README.md"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("STALLSCAN_")}
    env.update(
        HOME=str(tmp_path),
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
        NO_COLOR="1",
        COLUMNS="100",
    )
    for line, run, commands in BLOCKS[doc]:
        if not run:
            continue
        for cmd in commands:
            r = subprocess.run(["bash", "-c", cmd], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
            assert r.returncode == 0, f"{doc.name}:{line}: {cmd}\n{r.stderr[-2000:]}"
