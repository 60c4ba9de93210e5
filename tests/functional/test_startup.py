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


def _run_app(*argv: str) -> str:
    """Code that runs the console script's object (stallscan.cli:app) with `argv`, as the script does."""
    return f"import sys\nsys.argv = ['stallscan', *{argv!r}]\nfrom stallscan.cli import app\ntry:\n    app()\nexcept SystemExit:\n    pass"


def test_help_loads_nothing_heavy():
    assert _loaded(_run_app("--help"), HEAVY[:-1]) == []  # (typer renders help with rich)


def test_version_imports_no_command():
    assert _loaded(_run_app("--version") + "\nassert not [m for m in sys.modules if m.endswith('_cmd')]") == []
    out = subprocess.run([sys.executable, "-m", "stallscan", "--version"], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.startswith("stallscan ")


def test_a_command_imports_only_its_own_module():
    code = _run_app("sessions", "--help") + "\nprint('CMDS:', *sorted(m for m in sys.modules if m.endswith('_cmd')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split("CMDS:")[-1].split() == ["stallscan.cli.sessions_cmd"]


def test_every_command_is_in_the_lazy_table():
    """COMMANDS (the lazy table) names, for each command, the module of stallscan/cli whose app holds it."""
    import importlib

    from typer.main import get_command_name

    from stallscan.cli import COMMANDS
    from tests.helpers import ROOT

    found = {}
    mods = sorted(ROOT.joinpath("stallscan", "cli").glob("*_cmd.py"))
    assert mods, ROOT
    for mod in mods:
        own = importlib.import_module(f"stallscan.cli.{mod.stem}").app
        for c in own.registered_commands:
            found[c.name or get_command_name(c.callback.__name__)] = mod.stem
        for g in own.registered_groups:
            found[g.name] = mod.stem
    assert found == COMMANDS


def test_the_hook_entry_loads_no_cli():
    code = "import stallscan.guard.hook\nassert 'typer' not in sys.modules and 'rich' not in sys.modules"
    assert _loaded("import sys\n" + code) == []
