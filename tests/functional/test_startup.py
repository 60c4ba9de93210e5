"""Start fast: nothing heavy loads before a command needs it (`stallscan --version` / `--help`)."""

from __future__ import annotations

import subprocess
import sys

HEAVY = ("duckdb", "pyarrow", "numpy", "polars", "rich.table")


def _loaded(code: str, heavy: tuple[str, ...] = HEAVY) -> list[str]:
    probe = code + "\nimport sys\nprint('LOADED:', *(m for m in " + repr(heavy) + " if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    return out.split("LOADED:")[-1].split()


def test_cli_import_loads_nothing_heavy():
    assert _loaded("import stallscan.cli") == []


def test_help_loads_nothing_heavy():
    code = "import sys\nsys.argv = ['stallscan', '--help']\nfrom stallscan import run\ntry:\n    run()\nexcept SystemExit:\n    pass"
    assert _loaded(code, HEAVY[:-1]) == []  # (typer renders help with rich)


def test_version_needs_no_cli():
    code = "import sys\nsys.argv = ['stallscan', '--version']\nfrom stallscan import run\nrun()"
    assert _loaded(code + "\nassert 'typer' not in sys.modules") == []
    out = subprocess.run([sys.executable, "-m", "stallscan", "--version"], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.startswith("stallscan ")
