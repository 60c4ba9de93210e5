"""The report's path never imports pandas (about 0.6 s of CPU before any work of a one-session report).

pyarrow imports pandas whenever it builds an array from a Python list or a numpy array (`pa.array`,
`pa.table`) or converts one back (`to_numpy`); stallscan.store.arrow builds them from their buffers. A first
report and then a report after one new session (the incremental derives) run in fresh interpreters with
`-X importtime`, which lists every module imported. The one-session report, its stderr a pipe, imports no rich
either (45 modules; the progress bars' console is made only when stderr may be a terminal, the sections import
their renderers only to render).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

from tests.helpers import ROOT

# (no skip without pandas: nothing imports it then, and the rich check below still holds the path to account)


def _report(src, db) -> tuple[set[str], str]:
    """The modules a `report SRC --format json` imported, and its stderr without the import lines."""
    drop = ("STALLSCAN_CONFIG", "FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE")  # (these make rich print)
    env = {k: v for k, v in os.environ.items() if k not in drop} | {"STALLSCAN_PROFILE": "1"}
    r = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "stallscan", "report", str(src), "--format", "json", "--db", db],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
    )
    lines = r.stderr.splitlines()
    err = "\n".join(ln for ln in lines if not ln.startswith("import time:"))
    assert r.returncode == 0, err
    return {ln.rsplit("|", 1)[-1].strip() for ln in lines if ln.startswith("import time:")}, err


def _top(modules: set[str]) -> set[str]:
    return {m.split(".")[0] for m in modules}


def test_first_report_and_one_new_session_import_no_pandas_nor_rich(tmp_path):
    logs = ROOT / "sample_logs"
    tree = tmp_path / "logs"
    for d in ("claude-code", "codex", "gemini-cli", "cline", "aider"):
        shutil.copytree(logs / d, tree / d)
    db = str(tmp_path / "s.duckdb")
    first_modules, _ = _report(tree, db)
    first = _top(first_modules)
    assert "duckdb" in first and "pyarrow" in first  # (the probe sees the imports)
    assert "pandas" not in first
    new = tmp_path / "new"
    shutil.copytree(logs / "copilot-cli", new / "copilot-cli")  # one more session
    after_modules, err = _report(new, db)
    after = _top(after_modules)
    assert "derive turn_boundaries (incremental)" in err and "derive stalls (incremental)" in err, err
    assert "pandas" not in after
    # pyarrow.compute's 40 CPU ms of import: the scans call its kernels through stallscan.store.arrow_compute
    assert "pyarrow.compute" not in first_modules | after_modules
    assert "rich" not in after  # (a note or a warning on stderr would import it: this append prints none)
