"""Start fast: nothing heavy loads before a command needs it (`stallscan --version` / `--help`)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

HEAVY = ("duckdb", "pyarrow", "numpy", "polars", "rich.table")


def _loaded(code: str, heavy: tuple[str, ...] = HEAVY) -> list[str]:
    probe = code + "\nimport sys\nprint('LOADED:', *(m for m in " + repr(heavy) + " if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    return out.split("LOADED:")[-1].split()


def test_cli_import_loads_nothing_heavy():
    assert _loaded("import stallscan.cli") == []


def _run_app(*argv: str) -> str:
    """Code that runs the typer app (stallscan.cli:app, where the console script stallscan.entry hands over) with `argv`."""
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


# The console script (stallscan.entry) answers `--version` and a memo-hit report before typer loads. Its
# table of the report's options is tied here to the typer command's click params, and its parser to click's.
KINDS = {bool: "flag", int: "int", float: "float", str: "str", list[str]: "list"}


def _report_command():
    import typer.core
    import typer.main

    from stallscan.cli import app

    root = typer.main.get_command(app)
    assert isinstance(root, typer.core.TyperGroup)
    return root.get_command(None, "report")


def _help_options() -> set[str]:
    """The report command's help flags (the root's context settings name them)."""
    import typer.main

    from stallscan.cli import app

    root = typer.main.get_command(app)
    ctx = _report_command().make_context("report", [], parent=root.make_context("stallscan", ["report"]))
    return set(_report_command().get_help_option(ctx).opts)


def test_the_entry_knows_every_option_of_the_report_command():
    from stallscan.entry import LEFT_TO_TYPER, REPORT_OPTIONS, defaults

    cmd = _report_command()
    args = [p for p in cmd.params if p.param_type_name == "argument"]
    assert [(p.name, p.nargs) for p in args] == [("paths", -1)]  # the PATHs, anywhere among the options
    options = {opt: p for p in cmd.params if p.param_type_name == "option" for opt in (*p.opts, *p.secondary_opts)}
    assert set(options) | _help_options() == set(REPORT_OPTIONS) | set(LEFT_TO_TYPER), "an option unknown to one side"
    for opt, (name, kind) in REPORT_OPTIONS.items():
        p = options[opt]
        assert p.name == name, opt
        assert KINDS[p.type_descriptor.annotation] == kind, opt
        assert p.multiple == (kind == "list") and p.is_flag == (kind == "flag"), opt
        typer_default = (list(p.default or []) or None) if kind == "list" else p.default
        assert defaults()[name] == typer_default, opt


ARGVS = [
    [],
    ["logs", "--format", "json"],
    ["a", "b", "--db", "x.duckdb", "--json", "--threshold", "2.5", "--retry-bound", "1"],
    ["--threshold=0", "--limit=7", "--bootstrap", "20", "-o", "out.md", "logs"],
    ["--harness", "codex", "--harness=claude_code", "--model", "m", "--since", "2026-01-01", "--until", "2026-02-01"],
    ["--full", "--section", "stalls", "--section", "threshold", "--output", "r.txt", "x"],
]


@pytest.mark.parametrize("argv", ARGVS, ids=lambda a: " ".join(a) or "(none)")
def test_the_entry_parses_as_click_does(argv):
    from stallscan.entry import parse_report

    parsed = parse_report(argv)
    assert parsed is not None
    paths, values = parsed
    params = _report_command().make_context("report", list(argv)).params
    assert paths == list(params.pop("paths") or [])
    assert params.pop("from_parquet") is None and params.pop("events") is None
    assert values == {k: (list(v) or None) if isinstance(v, list | tuple) else v for k, v in params.items()}


@pytest.mark.parametrize(
    "argv",
    [
        ["--help"],
        ["-h"],
        ["--from-parquet", "out"],
        ["--bogus"],
        ["--limit", "-1"],
        ["--limit", "3", "--limit", "4"],  # click keeps the last; the entry does not guess
        ["--threshold", "1e3"],
        ["--threshold", " 2"],
        ["--threshold", "2."],
        ["--threshold", ".5"],
        ["--bootstrap", "٣"],  # a digit, but not ASCII
        ["--json=1"],
        ["--db"],
        ["--db", ""],
        ["--", "logs"],
        ["-"],
        ["-oout.md"],
    ],
    ids=" ".join,
)
def test_the_entry_hands_over_what_it_does_not_plainly_understand(argv):
    from stallscan.entry import parse_report

    assert parse_report(argv) is None


def test_version_before_typer_prints_what_the_option_prints():
    from typer.testing import CliRunner

    from stallscan.cli import app

    root = {p.name: p for p in __import__("typer.main").main.get_command(app).params}
    assert root["version"].opts == ["--version"] and root["version"].is_eager and root["version"].is_flag
    by_typer = CliRunner().invoke(app, ["--version"])
    code = "import sys\nsys.argv = ['stallscan', '--version']\nfrom stallscan.entry import main\nmain()\n"
    code += "assert not [m for m in sys.modules if m.split('.')[0] in ('typer', 'click', 'rich', 'duckdb', 'typing')]"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert (out.returncode, out.stdout, out.stderr) == (0, by_typer.stdout, "")
    script = subprocess.run([sys.executable, "-m", "stallscan", "--version"], capture_output=True, text=True)
    assert script.stdout == by_typer.stdout


@pytest.mark.parametrize(
    ("module", "setting", "user_value"),
    [
        ("duckdb", "ALLOCATOR_CONF", None),
        ("duckdb", "ALLOCATOR_CONF", "narenas:2"),
        ("numpy", "BLAS_THREADS", None),
        ("numpy", "BLAS_THREADS", "2"),
    ],
)
def test_the_console_script_sets_a_library_s_environment_before_it_loads(tmp_path, module, setting, user_value):
    """DuckDB reads its allocator's settings once, when it loads, and numpy's OpenBLAS its thread count (its workers
    spin before they sleep): the console script sets each (stallscan.entry.ALLOCATOR_CONF: the freed pages' decay;
    BLAS_THREADS: one thread) before any module imports the library (an ingest that reads lines loads both), and
    keeps a value the user set."""
    from stallscan import entry

    name, value = getattr(entry, setting)
    src = Path(__file__).parents[2] / "sample_logs" / "claude-code"
    probe = (
        "import os, sys\n"
        "class Probe:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        f"        if name == {module!r}:\n"
        f"            print('AT_IMPORT:', os.environ.get({name!r}), flush=True)\n"
        "sys.meta_path.insert(0, Probe())\n"
        f"sys.argv = ['stallscan', 'ingest', {str(src)!r}, '--db', {str(tmp_path / 'x.duckdb')!r}]\n"
        "from stallscan.entry import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
    )
    env = {k: v for k, v in os.environ.items() if k != name}
    if user_value:
        env[name] = user_value
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, check=True).stdout
    seen = [line.split(":", 1)[1].strip() for line in out.splitlines() if line.startswith("AT_IMPORT:")]
    assert seen[:1] == [user_value or value]
