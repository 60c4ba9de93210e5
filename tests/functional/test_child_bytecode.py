"""tests/child_bytecode.py: where PYTHONDONTWRITEBYTECODE is set, the processes a test run starts compile each
module once into one folder of the run, write nothing beside a source file, and the folder goes when the
process that made it exits; without the variable nothing changes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# a test run's main process: share_bytecode(), then two children importing the same module; prints what it saw
RUN = """
import json, os, subprocess, sys
from tests.child_bytecode import share_bytecode
share_bytecode()
folder = os.environ.get("PYTHONPYCACHEPREFIX")
child = [sys.executable, "-c", "import sys; sys.path.insert(0, sys.argv[1]); import probe_mod", sys.argv[1]]
subprocess.run(child, check=True)
after_first = sorted(str(p) for p in __import__("pathlib").Path(folder).rglob("*.pyc")) if folder else []
subprocess.run(child, check=True)
print(json.dumps({"folder": folder, "dont_write": os.environ.get("PYTHONDONTWRITEBYTECODE"), "pyc": after_first}))
"""


def _run(tmp_path: Path, dont_write: bool) -> dict[str, object]:
    src = tmp_path / "src"
    src.mkdir()
    (src / "probe_mod.py").write_text("VALUE = 1\n")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")}
    env["PYTHONPATH"] = str(ROOT)
    if dont_write:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    out = subprocess.run(
        [sys.executable, "-c", RUN, str(src)], env=env, cwd=ROOT, capture_output=True, text=True, check=True
    )
    result: dict[str, object] = json.loads(out.stdout)
    result["beside_source"] = sorted(p.name for p in src.rglob("*.pyc"))
    return result


def test_children_share_one_cache_that_is_removed_at_exit(tmp_path: Path) -> None:
    r = _run(tmp_path, dont_write=True)
    folder = r["folder"]
    assert isinstance(folder, str) and folder
    assert r["dont_write"] is None  # the children may write (into the folder only)
    pyc = r["pyc"]
    assert isinstance(pyc, list) and any(Path(p).name.startswith("probe_mod.") for p in pyc)
    assert r["beside_source"] == []  # nothing written next to the source
    assert not Path(folder).exists()  # removed when the process that made it exited


def test_without_the_variable_nothing_changes(tmp_path: Path) -> None:
    r = _run(tmp_path, dont_write=False)
    assert r["folder"] is None
    assert r["pyc"] == []
    assert r["beside_source"] != []  # the usual __pycache__ beside the source
