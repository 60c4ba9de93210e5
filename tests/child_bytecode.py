"""One bytecode cache for the Python processes a test run starts, where the environment forbids writing one.

With PYTHONDONTWRITEBYTECODE set (containers and CI images often set it) and no __pycache__ in the checkout
or the virtualenv (pip install --no-compile, a fresh clone), every `python -m stallscan ...` a test starts
compiles stallscan, typer, click, rich, duckdb's and polars' Python code again before it does anything: about
0.7 CPU s of a sessions command's 1.3 on the CI machine, over hundreds of child processes. share_bytecode()
lets the children write their bytecode to one temporary folder of this run (PYTHONPYCACHEPREFIX), so each
module is compiled once per run; the checkout and the virtualenv stay as they were (nothing is written
beside a source file) and the folder is removed when the process that made it exits. Without
PYTHONDONTWRITEBYTECODE it does nothing: the children read and write their __pycache__ as usual.

Called from tests/conftest.py on import: in pytest's main process, before pytest-xdist starts its workers,
which inherit the environment (and so compile into the same folder) and find nothing left to do.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile


def share_bytecode() -> None:
    if not os.environ.get("PYTHONDONTWRITEBYTECODE"):
        return  # bytecode is written as usual (or a parent process already set the shared folder up)
    folder = tempfile.mkdtemp(prefix="stallscan-tests-pycache-")
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    os.environ["PYTHONPYCACHEPREFIX"] = folder
    del os.environ["PYTHONDONTWRITEBYTECODE"]
