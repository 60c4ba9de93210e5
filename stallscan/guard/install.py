"""Write / remove the guard's hook entries in Claude Code's settings.json and Codex's hooks.json.

    install(target, mode, log)  -> Change   (idempotent; the first install keeps a byte copy of the file)
    uninstall(target)           -> Change   (restores that copy byte for byte when the file is still as
                                             install left it; else removes only the guard's entries)
    status(target)              -> dict[str, Any]

Both files share one shape: {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": ..., "timeout":
...}]}], "SubagentStop": [...]}}. The guard's entries are the command hooks whose command runs
`stallscan.guard`; every other hook, key and event is left as it was.
"""

from __future__ import annotations

import copy
import difflib
import hashlib
import json
import os
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stallscan.store.errors import InputError, StallscanError

MARK = "stallscan.guard"
EVENTS = ("Stop", "SubagentStop")
TIMEOUT_S = 10
HARNESS_NAMES = {"claude": "claude_code", "codex": "codex"}


@dataclass(frozen=True)
class Target:
    harness: str  # claude | codex
    scope: str  # user | project
    path: Path

    @property
    def backup(self) -> Path:
        return self.path.with_name(self.path.name + ".stallscan-backup")

    @property
    def state(self) -> Path:
        return self.path.with_name(self.path.name + ".stallscan-state.json")


@dataclass
class Change:
    target: Target
    action: str  # installed | updated | unchanged | restored | removed | absent
    diff: str
    note: str = ""


def target(harness: str, scope: str = "user", project: str | os.PathLike[str] | None = None) -> Target:
    """The settings file of a harness: Claude Code ~/.claude/settings.json or <project>/.claude/settings.json;
    Codex $CODEX_HOME/hooks.json (default ~/.codex) or <project>/.codex/hooks.json."""
    if harness not in HARNESS_NAMES:
        raise StallscanError(f"unknown harness {harness!r}", hint="use --claude or --codex")
    if scope not in ("user", "project"):
        raise StallscanError(f"unknown scope {scope!r}", hint="use --scope user or --scope project")
    root = Path(project or os.getcwd())
    if harness == "claude":
        path = (Path.home() / ".claude" if scope == "user" else root / ".claude") / "settings.json"
    else:
        home = Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex")
        path = (home if scope == "user" else root / ".codex") / "hooks.json"
    return Target(harness, scope, path)


def hook_command(harness: str, mode: str, log: str | os.PathLike[str], python: str | None = None) -> str:
    """The exact command the hook entry runs (the interpreter that has stallscan installed)."""
    py = python or sys.executable
    return (
        f"{shlex.quote(py)} -m {MARK} --harness {harness} --mode {mode} --log {shlex.quote(str(Path(log).resolve()))}"
    )


def hook_entry(command: str) -> dict[str, Any]:
    return {"hooks": [{"type": "command", "command": command, "timeout": TIMEOUT_S}]}


def _read(path: Path) -> tuple[bytes | None, dict[str, Any]]:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None, {}
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}", hint="check the file's permissions")
    if not raw.strip():
        return raw, {}
    try:
        doc = json.loads(raw)
    except ValueError as exc:
        raise InputError(f"{path} is not valid JSON: {exc}", hint="fix the file first; stallscan will not overwrite it")
    if not isinstance(doc, dict):
        raise InputError(f"{path} is not a JSON object", hint="fix the file first; stallscan will not overwrite it")
    return raw, doc


def _indent(raw: bytes | None) -> int | str:
    if raw:
        for line in raw.decode("utf-8", "replace").splitlines()[1:]:
            stripped = line.lstrip(" \t")
            if stripped and len(stripped) < len(line):
                ws = line[: len(line) - len(stripped)]
                return "\t" if ws.startswith("\t") else len(ws)
    return 2


def _dump(doc: dict[str, Any], raw: bytes | None) -> bytes:
    return (json.dumps(doc, indent=_indent(raw), ensure_ascii=False) + "\n").encode("utf-8")


def _ours(hook: Any) -> bool:
    return isinstance(hook, dict) and MARK in str(hook.get("command", ""))


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".stallscan-tmp")
    tmp.write_bytes(data)
    if path.exists():
        os.chmod(tmp, path.stat().st_mode & 0o7777)
    os.replace(tmp, path)


def _diff(path: Path, before: bytes | None, after: bytes | None) -> str:
    a = (before or b"").decode("utf-8", "replace").splitlines(keepends=True)
    b = (after or b"").decode("utf-8", "replace").splitlines(keepends=True)
    return "".join(difflib.unified_diff(a, b, f"{path} (before)", f"{path} (after)"))


def _sha(data: bytes | None) -> str | None:
    return None if data is None else hashlib.sha256(data).hexdigest()


def install(t: Target, mode: str = "observe", log: str | os.PathLike[str] = "stallscan-guard.jsonl") -> Change:
    if mode not in ("observe", "enforce"):
        raise StallscanError(f"unknown mode {mode!r}", hint="use --mode observe or --mode enforce")
    raw, doc = _read(t.path)
    cmd = hook_command(t.harness, mode, log)
    new = copy.deepcopy(doc)
    hooks = new.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise InputError(f"{t.path}: 'hooks' is not an object", hint="fix the file first")
    for event in EVENTS:
        groups = hooks.setdefault(event, [])
        if not isinstance(groups, list):
            raise InputError(f"{t.path}: hooks.{event} is not a list", hint="fix the file first")
        found = False
        for g in groups:
            for h in g.get("hooks", []) if isinstance(g, dict) else []:
                if _ours(h):
                    h["command"], found = cmd, True
        if not found:
            groups.append(hook_entry(cmd))
    if new == doc and raw is not None:
        return Change(t, "unchanged", "", "already installed")
    data = _dump(new, raw)
    state = _load_state(t)
    if state is None:  # the first install: keep the user's file as it was, byte for byte
        if raw is not None:
            t.backup.parent.mkdir(parents=True, exist_ok=True)
            t.backup.write_bytes(raw)
        state = {"existed": raw is not None, "original_sha256": _sha(raw)}
    _write(t.path, data)
    state["installed_sha256"] = _sha(data)
    t.state.write_text(json.dumps(state, indent=2) + "\n", encoding="utf-8")
    action = "updated" if any(_ours(h) for h in _our_hooks(doc)) else "installed"
    return Change(t, action, _diff(t.path, raw, data))


def _our_hooks(doc: dict[str, Any]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    hooks = doc.get("hooks") if isinstance(doc, dict) else None
    if not isinstance(hooks, dict):
        return out
    for event, groups in hooks.items():
        for g in groups if isinstance(groups, list) else []:
            for h in g.get("hooks", []) if isinstance(g, dict) else []:
                if _ours(h):
                    out.append({**h, "event": event})
    return out


def _load_state(t: Target) -> dict[str, Any] | None:
    try:
        state: dict[str, Any] = json.loads(t.state.read_text(encoding="utf-8"))
        return state
    except (FileNotFoundError, ValueError):
        return None


def uninstall(t: Target) -> Change:
    raw, doc = _read(t.path)
    state = _load_state(t)
    if state is not None and _sha(raw) == state.get("installed_sha256"):
        # untouched since install: put the original bytes back (or remove the file install created)
        if state.get("existed"):
            original = t.backup.read_bytes()
            _write(t.path, original)
            t.backup.unlink()
        else:
            original = None
            t.path.unlink()
        t.state.unlink()
        return Change(t, "restored", _diff(t.path, raw, original), "settings restored byte for byte")
    if not _our_hooks(doc):
        if state is not None:
            t.state.unlink()
        return Change(t, "absent", "", "the guard is not installed here")
    new = copy.deepcopy(doc)
    hooks = new["hooks"]
    for event in list(hooks):
        groups = hooks[event]
        if not isinstance(groups, list):
            continue
        kept = []
        for g in groups:
            if isinstance(g, dict) and isinstance(g.get("hooks"), list) and any(_ours(h) for h in g["hooks"]):
                g["hooks"] = [h for h in g["hooks"] if not _ours(h)]
                if not g["hooks"]:
                    continue
            kept.append(g)
        if kept or not groups:
            hooks[event] = kept
        else:
            del hooks[event]
    if not hooks:
        del new["hooks"]
    data = _dump(new, raw)
    _write(t.path, data)
    note = "the file changed since install: removed only the guard's entries"
    if state is not None:
        t.state.unlink()
        if t.backup.exists():
            note += f"; the pre-install copy is kept at {t.backup}"
    return Change(t, "removed", _diff(t.path, raw, data), note)


def status(t: Target) -> dict[str, Any]:
    from stallscan.guard import log as guard_log

    try:
        _, doc = _read(t.path)
    except InputError as exc:
        return {"harness": t.harness, "scope": t.scope, "file": str(t.path), "error": exc.message}
    ours = _our_hooks(doc)
    out: dict[str, Any] = {
        "harness": t.harness,
        "scope": t.scope,
        "file": str(t.path),
        "installed": bool(ours),
        "events": sorted({h["event"] for h in ours}),
        "backup": str(t.backup) if t.backup.exists() else None,
        "mode": None,
        "log": None,
        "log_records": None,
    }
    if ours:
        argv = shlex.split(ours[0]["command"])
        for flag in ("--mode", "--log"):
            if flag in argv and argv.index(flag) + 1 < len(argv):
                out[flag[2:]] = argv[argv.index(flag) + 1]
    if out["log"]:
        recs = guard_log.read(Path(out["log"]))
        counts: dict[str, Any] = {}
        for r in recs:
            counts[r.get("decision") or "?"] = counts.get(r.get("decision") or "?", 0) + 1
        out["log_records"] = len(recs)
        out["log_decisions"] = counts
        out["log_last"] = recs[-1]["time"] if recs else None
    return out


GITIGNORE_MARK = "# stallscan guard log (written by `stallscan guard install --scope project`)"


def ignore_log(project: str | os.PathLike[str] | None, log: str | os.PathLike[str]) -> str | None:
    """A project-scope install whose log lies inside the project tree: add the log to the project's
    .gitignore (under a marker line uninstall removes), so a decision log is never committed by accident.
    Returns a note for the user, None when nothing was needed."""
    root = Path(project or os.getcwd()).resolve()
    path = Path(log).resolve()
    try:
        rel = path.relative_to(root)
    except ValueError:
        return None  # outside the project tree
    entry = "/" + rel.as_posix()
    gi = root / ".gitignore"
    text = gi.read_text(encoding="utf-8") if gi.is_file() else ""
    if entry in text.splitlines():
        return None
    sep = "" if not text or text.endswith("\n") else "\n"
    gi.write_text(text + sep + GITIGNORE_MARK + "\n" + entry + "\n", encoding="utf-8")
    return f"added {entry} to {gi}"


def unignore_log(project: str | os.PathLike[str] | None) -> str | None:
    """Remove what ignore_log added to the project's .gitignore (the marker line and the entry after it)."""
    gi = Path(project or os.getcwd()).resolve() / ".gitignore"
    if not gi.is_file():
        return None
    lines = gi.read_text(encoding="utf-8").splitlines(keepends=True)
    if not any(ln.rstrip("\n") == GITIGNORE_MARK for ln in lines):
        return None
    kept: list[str] = []
    skip = False
    for ln in lines:
        if ln.rstrip("\n") == GITIGNORE_MARK:
            skip = True
            continue
        if skip:
            skip = False
            continue
        kept.append(ln)
    if kept:
        gi.write_text("".join(kept), encoding="utf-8")
    else:
        gi.unlink()
    return f"removed the guard log's entry from {gi}"
