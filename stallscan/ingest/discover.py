"""Expand the user's PATH arguments (files, directories, globs) into transcript files."""

from __future__ import annotations

import glob
import os
from dataclasses import dataclass, field
from pathlib import Path

from stallscan.ingest.detect import holds_records
from stallscan.ingest.suffixes import SNIFF_BYTES, SNIFF_MAX_FILES, WALK_SUFFIXES
from stallscan.store.errors import InputError, StallscanError

DEFAULT_FOLDERS = {
    "claude_code": "~/.claude/projects",
    "codex": "~/.codex/sessions",
    "openai_chat": "~/.hermes/sessions",
    # Cline / Roo Code task folders: <taskId>/api_conversation_history.json + ui_messages.json
    # (VS Code globalStorage on Linux, macOS, Windows; the Cline CLI keeps its own)
    "cline": "~/.config/Code/User/globalStorage/saoudrizwan.claude-dev/tasks",
    "cline_macos": "~/Library/Application Support/Code/User/globalStorage/saoudrizwan.claude-dev/tasks",
    "cline_windows": "~/AppData/Roaming/Code/User/globalStorage/saoudrizwan.claude-dev/tasks",
    "roo": "~/.config/Code/User/globalStorage/rooveterinaryinc.roo-cline/tasks",
    "roo_macos": "~/Library/Application Support/Code/User/globalStorage/rooveterinaryinc.roo-cline/tasks",
    "roo_windows": "~/AppData/Roaming/Code/User/globalStorage/rooveterinaryinc.roo-cline/tasks",
    "cline_cli": "~/.cline/data/tasks",
    "gemini_cli": "~/.gemini/tmp",  # <projectHash>/chats/session-*.json(l)
    "copilot_cli": "~/.copilot/session-state",  # <sessionId>/events.jsonl
    "openhands": "~/.openhands/sessions",  # file store: sessions/<sid>/events/<n>.json (one event a file)
    # aider writes its two files into the working tree: only these two files of the current directory
    "aider": "./.aider.chat.history.md",
    "aider_input": "./.aider.input.history",
}


@dataclass
class Discovery:
    files: list[Path] = field(default_factory=list)
    unreadable: list[tuple[str, str]] = field(default_factory=list)  # (path, why)
    searched: list[str] = field(default_factory=list)
    # files a directory walk left out, per suffix (".md", ".py", "(none)"): their first bytes hold no record
    # of a known format, or (past SNIFF_MAX_FILES sniffed) they were not opened
    left_out: dict[str, int] = field(default_factory=dict)
    unopened: int = 0  # of those, files not sniffed (the cap)
    sniffed: int = 0


def default_roots() -> list[Path]:
    return [Path(os.path.expanduser(p)) for p in DEFAULT_FOLDERS.values()]


def discover(paths: list[str]) -> Discovery:
    """Files to ingest, absolute, de-duplicated, in a stable order."""
    found = Discovery()
    seen: set[str] = set()

    def add(p: Path) -> None:
        key = str(p)
        if key not in seen:
            seen.add(key)
            found.files.append(p)

    if not paths:
        roots = [r for r in default_roots() if r.is_dir() or r.is_file()]
        found.searched = [str(r) for r in roots]  # the usual folders that exist here
        if not roots:
            raise StallscanError(
                "no PATH given and none of the usual log folders exist (" + ", ".join(DEFAULT_FOLDERS.values()) + ")",
                hint="pass a file, directory or glob: stallscan ingest PATH",
            )
        paths = [str(r) for r in roots]
    for raw in paths:
        p = Path(os.path.expanduser(raw))
        if p.is_file():
            add(_absolute(p))
        elif p.is_dir():
            for f in _walk(p, found):
                add(f)
        elif any(ch in raw for ch in "*?["):
            matches = sorted(glob.glob(os.path.expanduser(raw), recursive=True))
            if not matches:
                raise InputError(
                    f"no file matches {raw}", hint="check the pattern; quote it so the shell leaves it alone"
                )
            for m in matches:
                mp = Path(m)
                if mp.is_file():
                    add(_absolute(mp))
                elif mp.is_dir():
                    for f in _walk(mp, found):
                        add(f)
        elif p.exists() or p.is_symlink():
            raise InputError(f"cannot read {raw}: not a regular file or directory (broken link?)")
        else:
            raise InputError(f"no such file or directory: {raw}", hint="check the path")
    keep = []
    for f in found.files:
        if not _utf8(str(f)):
            found.unreadable.append((shown(f), NOT_UTF8))
        elif not os.access(f, os.R_OK):
            found.unreadable.append((str(f), "permission denied"))
        else:
            keep.append(f)
    found.files = keep
    return found


NOT_UTF8 = "file name is not valid UTF-8 (the database keeps paths as text): rename it to read it"


def _utf8(s: str) -> bool:
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:  # a byte that is not UTF-8, kept by Python as a lone surrogate
        return False
    return True


def shown(p: str | Path) -> str:
    """A path as text that can be printed and stored: bytes that are not UTF-8 shown as \\xNN."""
    return os.fsencode(p).decode("utf-8", errors="backslashreplace")


def _absolute(p: Path) -> Path:
    return Path(os.path.abspath(p))


def _walk(root: Path, found: Discovery) -> list[Path]:
    def onerror(err: OSError) -> None:
        found.unreadable.append((shown(err.filename or str(root)), err.strerror or "unreadable"))

    out: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(root, onerror=onerror, followlinks=False):
        dirnames.sort()
        for name in sorted(filenames):
            lname = name.lower()
            full = Path(dirpath) / name
            if lname.endswith(WALK_SUFFIXES) or _sniff(full, found):
                if full.is_file():
                    out.append(_absolute(full))
            elif full.is_file():  # (a broken link or a FIFO is no input)
                suffix = os.path.splitext(lname)[1] or "(none)"
                found.left_out[suffix] = found.left_out.get(suffix, 0) + 1
    return out


def _sniff(path: Path, found: Discovery) -> bool:
    """A name the walk does not know: taken when its first bytes hold a record of a known format."""
    if found.sniffed >= SNIFF_MAX_FILES:
        found.unopened += 1
        return False
    if not path.is_file():
        return False
    found.sniffed += 1
    return holds_records(path, SNIFF_BYTES)
