"""The package imports only downward: cli -> report -> sweep -> replay -> ingest -> store.

Read from the source (ast), so a lazy import inside a function counts as much as one at the top."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.helpers import ROOT

PKG = ROOT / "stallscan"
# stage of each top-level part of the package; a module may import its own stage or a lower one
RANK = {
    "store": 0,
    "ingest": 1,
    "replay": 2,
    "sweep": 3,
    "report": 4,
    "export": 4,
    "export_files": 4,
    "guard": 4,
    "spark": 4,
    "api": 5,
    "cli": 6,
    "entry": 7,  # the console script: --version and a memo-hit report before typer, then the cli
}
MODULES = sorted(p for p in PKG.rglob("*.py") if "__pycache__" not in p.parts)


def _stage(dotted: str) -> str | None:
    parts = dotted.split(".")
    return parts[1] if len(parts) > 1 and parts[0] == "stallscan" and parts[1] in RANK else None


def _imports(path: Path, pkg: Path = PKG) -> list[tuple[int, str]]:
    """(line, absolute module) of every import in a module, relative ones resolved."""
    here = ".".join(path.relative_to(pkg.parent).with_suffix("").parts)
    package = here if path.name == "__init__.py" else here.rsplit(".", 1)[0]
    if package.endswith(".__init__"):
        package = package[: -len(".__init__")]
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            out.append((node.lineno, mod))
            out += [(node.lineno, f"{mod}.{a.name}") for a in node.names if _stage(f"{mod}.{a.name}")]
        elif isinstance(node, ast.Dict):  # the lazy re-export tables of package __init__s
            out += [
                (node.lineno, v.value)
                for v in node.values
                if isinstance(v, ast.Constant) and isinstance(v.value, str) and v.value.startswith("stallscan.")
            ]
    return out


def _upward(path: Path, pkg: Path = PKG) -> list[str]:
    own = _stage("stallscan." + ".".join(path.relative_to(pkg).with_suffix("").parts))
    if own is None:
        return []  # stallscan/__init__, __main__: the root may reach any stage (lazily)
    return [
        f"line {line}: {mod}"
        for line, mod in _imports(path, pkg)
        if _stage(mod) is not None and RANK[_stage(mod)] > RANK[own]
    ]


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PKG)))
def test_imports_point_downward(path):
    assert not _upward(path), f"{path.relative_to(PKG)} imports a higher stage: {_upward(path)}"


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PKG)))
def test_only_the_cli_imports_typer(path):
    if path.relative_to(PKG).parts[0] == "cli":
        return
    assert not [m for _, m in _imports(path) if m.split(".")[0] == "typer"], path


def test_every_module_belongs_to_a_stage():
    loose = [p.name for p in PKG.glob("*.py") if p.stem not in RANK and p.name not in ("__init__.py", "__main__.py")]
    assert not loose, f"modules outside a stage package: {loose}"


def test_the_checker_sees_an_upward_import(tmp_path):
    """Relative, lazy (inside a function) and re-exported upward imports are all caught."""
    pkg = tmp_path / "stallscan"
    (pkg / "store").mkdir(parents=True)
    (pkg / "replay").mkdir()
    lazy = pkg / "store" / "a.py"
    lazy.write_text("def f():\n    from ..report.build import build_report\n")
    rel = pkg / "replay" / "b.py"
    rel.write_text("from ..sweep import core\nfrom ..ingest import run\n")
    table = pkg / "store" / "__init__.py"
    table.write_text('_EXPORTS = {"x": "stallscan.cli.app"}\n')
    fine = pkg / "replay" / "c.py"
    fine.write_text("from stallscan.store import sql\nfrom . import b\n")
    assert _upward(lazy, pkg)[0] == "line 2: stallscan.report.build"
    assert _upward(rel, pkg) == ["line 1: stallscan.sweep", "line 1: stallscan.sweep.core"]
    assert _upward(table, pkg) == ["line 1: stallscan.cli.app"]
    assert _upward(fine, pkg) == []


def _module_name(path: Path, pkg: Path = PKG) -> str:
    parts = path.relative_to(pkg.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _graph(pkg: Path = PKG) -> dict[str, set[str]]:
    """Module -> the package's modules it imports: at the top, inside functions (lazy), under
    TYPE_CHECKING, and through package __init__ re-export tables. `from a import b` is an edge to a.b when
    that is a module, else to a (whose __init__ runs, and whose lazy table counts only by the names it maps)."""
    mods = {_module_name(p, pkg): p for p in sorted(pkg.rglob("*.py")) if "__pycache__" not in p.parts}
    graph: dict[str, set[str]] = {}
    for name, path in mods.items():
        found = _imports(path, pkg)
        # `from a import b` with b a module runs a's __init__ but reaches b, not a's lazy re-export table
        via = {(line, t.rpartition(".")[0]) for line, t in found if t in mods}
        out = set()
        for line, target in found:
            if (line, target) in via:
                continue
            while target and target not in mods:
                target = target.rpartition(".")[0]
            if target and target != name:
                out.add(target)
        graph[name] = out
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle (as a path a -> ... -> a), or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt) :], nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_the_import_graph_is_acyclic():
    """No module reaches itself through imports, the root and lazy imports included."""
    cycle = _cycle(_graph())
    assert cycle is None, "import circle: " + " -> ".join(cycle or [])


def test_the_cycle_checker_sees_a_lazy_circle(tmp_path):
    pkg = tmp_path / "stallscan"
    (pkg / "replay").mkdir(parents=True)
    (pkg / "__init__.py").write_text('_EXPORTS = {"x": "stallscan.replay.a"}\n')
    (pkg / "replay" / "__init__.py").write_text("")
    (pkg / "replay" / "a.py").write_text("from stallscan.replay import b\n")
    (pkg / "replay" / "b.py").write_text("def f():\n    from . import c\n")
    (pkg / "replay" / "c.py").write_text("import stallscan.replay.a\n")
    assert _cycle(_graph(pkg)) == [
        "stallscan.replay.a",
        "stallscan.replay.b",
        "stallscan.replay.c",
        "stallscan.replay.a",
    ]
    (pkg / "replay" / "c.py").write_text(
        "import stallscan.replay.b as _  # (b itself does not import c at import time)\n"
    )
    assert _cycle(_graph(pkg)) is not None  # lazy imports count: b -> c -> b
    (pkg / "replay" / "c.py").write_text("")
    assert _cycle(_graph(pkg)) is None


def test_first_modules_exist():
    """Each module tests/conftest.py sorts to the front exists: a renamed one would silently run in collection
    order again, at the end of a worker."""
    from tests.helpers import FIRST_MODULES, TESTS

    assert [name for name in FIRST_MODULES if not (TESTS / name).is_file()] == []


# the top level the design card fixes, and the parts beside it (docs, benchmarks, examples, CI, contributors' notes)
TOP_LEVEL = {"pyproject.toml", "stallscan", "tests", "sample_logs", "queries", "README.md"} | {
    "docs",
    "bench",
    "examples",
    ".ci",
    ".gitignore",
    ".pre-commit-config.yaml",
    "CONTRIBUTING.md",
}


def _tracked() -> list[str]:
    import shutil
    import subprocess

    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout (or no git): the tracked files cannot be listed")
    out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    return [p for p in out.decode().split("\0") if p]


def test_the_tracked_top_level_is_the_design_cards():
    """Nothing else is committed at the top: a stray output (a database written by `--db` with a misplaced
    argument, a scratch file) would otherwise ship with every clone."""
    assert sorted({p.split("/", 1)[0] for p in _tracked()} - TOP_LEVEL) == []


def test_no_database_file_is_tracked():
    """No committed file is a DuckDB database, whatever its name (the file header's magic bytes at offset 8)."""
    dbs = []
    for p in _tracked():
        with open(ROOT / p, "rb") as f:
            if f.read(12)[8:12] == b"DUCK":
                dbs.append(p)
    assert dbs == []
