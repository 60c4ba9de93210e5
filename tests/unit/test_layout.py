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
    "guard": 4,
    "spark": 4,
    "api": 5,
    "cli": 6,
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
