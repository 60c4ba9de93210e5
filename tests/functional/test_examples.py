"""examples/: the notebook's code is the script twin's body, and the script reproduces `stallscan sweep`."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

from typer.testing import CliRunner

from stallscan.cli import app
from tests.helpers import ROOT

SCRIPT = ROOT / "examples" / "sweep_from_parquet.py"
NOTEBOOK = ROOT / "examples" / "sweep_from_parquet.ipynb"
MARKER = "# ---- notebook code cells below ----\n"


def _cli(*args: str) -> str:
    r = CliRunner().invoke(app, list(args))
    assert r.exit_code == 0, r.output
    return r.stdout


def _run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("STALLSCAN_")} | (env or {})
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=120, env=env)


def test_notebook_code_is_the_script_body():
    body = SCRIPT.read_text(encoding="utf-8").split(MARKER, 1)[1].strip("\n")
    cells = json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]
    code = "\n\n".join("".join(c["source"]).strip("\n") for c in cells if c["cell_type"] == "code")
    assert code == body
    assert "sys.argv" not in code  # a kernel's argv holds the kernel's own arguments


def test_script_reproduces_the_sweep(tmp_path, sample_ingested_file):
    db, out = str(tmp_path / "s.duckdb"), tmp_path / "out"
    shutil.copy(sample_ingested_file, db)
    _cli("export", str(out), "--tables", "turn_boundaries", "--partition-by", "source_format", "--db", db)
    want = json.loads(_cli("sweep", "--format", "json", "--policy", "router", "--bootstrap", "0", "--db", db))
    rec = next(r for r in want["recommendations"] if r["policy"] == "router" and r["group"] == "all")
    # with the database at hand the script also checks its curve against the notebook API
    p = _run(str(SCRIPT), str(out), env={"STALLSCAN_DB": db})
    assert p.returncode == 0, p.stderr
    got = json.loads(p.stdout.strip().splitlines()[-1])
    assert (got["threshold"], got["cost"], got["events"], got["gap_decided"]) == (
        rec["threshold"],
        rec["cost"],
        rec["n_events"],
        rec["n_gap_decided"],
    )
    assert got["cost_at_2s"] == rec["at_2s"]["cost"]
    assert (got["api_threshold"], got["api_cost"]) == (rec["threshold"], rec["cost"])
    # without it, the parquet part alone (what a notebook next to an export folder does)
    alone = _run(str(SCRIPT), str(out), env={"STALLSCAN_DB": str(tmp_path / "absent.duckdb")})
    assert alone.returncode == 0, alone.stderr
    assert json.loads(alone.stdout.strip().splitlines()[-1]) == got | {"api_threshold": None, "api_cost": None}


def test_script_without_an_argument_prints_its_usage(tmp_path):
    p = _run(str(SCRIPT))
    assert p.returncode == 2
    assert p.stderr.startswith("usage: python examples/sweep_from_parquet.py EXPORT_DIR")
    assert "Traceback" not in p.stderr and p.stdout == ""


def test_notebook_code_with_no_export_says_what_to_run(tmp_path):
    """The notebook's code (no script header) run where there is no export: one line saying what to run."""
    code = SCRIPT.read_text(encoding="utf-8").split(MARKER, 1)[1]
    p = _run("-c", code, env={"STALLSCAN_EXPORT_DIR": str(tmp_path / "none")})
    assert p.returncode == 1
    assert "no turn_boundaries parquet under" in p.stderr and "stallscan export" in p.stderr
    assert "Traceback" not in p.stderr
