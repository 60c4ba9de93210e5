"""examples/: the notebook's code is the script twin's body, and the script reproduces `stallscan sweep`."""

from __future__ import annotations

import json
import subprocess
import sys

from stallscan.export import export_tables
from stallscan.ingest.run import ingest_paths
from stallscan.sweep.core import run_sweep, thresholds_grid
from tests.conftest import ROOT, SAMPLES

SCRIPT = ROOT / "examples" / "sweep_from_parquet.py"
NOTEBOOK = ROOT / "examples" / "sweep_from_parquet.ipynb"


def test_notebook_code_is_the_script_body():
    body = SCRIPT.read_text(encoding="utf-8").split('"""', 2)[2].strip("\n")
    cells = json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]
    code = "\n\n".join("".join(c["source"]).strip("\n") for c in cells if c["cell_type"] == "code")
    assert code == body


def test_script_reproduces_the_sweep(con, tmp_path):
    ingest_paths(con, [str(SAMPLES)])
    export_tables(con, tmp_path, ["turn_boundaries"], ["source_format"])
    p = subprocess.run([sys.executable, str(SCRIPT), str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    got = json.loads(p.stdout.strip().splitlines()[-1])
    rec = run_sweep(con, thresholds_grid(), bootstrap=0, policies=("vgr",)).recommendation[("vgr", "all")]
    assert (got["threshold"], got["cost"], got["events"], got["gap_decided"]) == (
        rec["threshold"],
        rec["cost"],
        rec["n_events"],
        rec["n_gap_decided"],
    )
    assert got["cost_at_2s"] == rec["at_2s"]["cost"]
