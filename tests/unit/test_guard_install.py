"""`stallscan guard install / uninstall / status` on settings files that already hold other hooks.

The round trip leaves the user's file byte-identical; install is idempotent and keeps a backup; a file the
user edited after install loses only the guard's entries; a file that is not JSON is never overwritten.
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from stallscan.cli import app
from stallscan.guard import install as gi
from stallscan.store.errors import InputError

CLAUDE_SETTINGS = (
    '{\n    "model": "opus",\n    "permissions": {"allow": ["Bash(npm test)"]},\n    "hooks": {\n'
    '        "Stop": [{"hooks": [{"type": "command", "command": "~/bin/notify.sh"}]}],\n'
    '        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "guard-bash"}]}]\n'
    "    }\n}"  # no newline at the end, 4-space indent, compact inner lists: all must come back as they were
)
CODEX_HOOKS = '{\n  "hooks": {\n    "SubagentStop": [\n      {"hooks": [{"type": "command", "command": "x.py", "timeout": 5}]}\n    ]\n  }\n}\n'


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("CODEX_HOME", raising=False)
    return tmp_path / "home"


@pytest.mark.parametrize(
    ("harness", "scope", "rel", "content"),
    [
        ("claude", "user", "home/.claude/settings.json", CLAUDE_SETTINGS),
        ("claude", "project", "proj/.claude/settings.json", CLAUDE_SETTINGS),
        ("codex", "user", "home/.codex/hooks.json", CODEX_HOOKS),
        ("codex", "project", "proj/.codex/hooks.json", CODEX_HOOKS),
    ],
)
def test_round_trip_is_byte_identical(tmp_path, home, harness, scope, rel, content):
    path = tmp_path / rel
    path.parent.mkdir(parents=True)
    path.write_bytes(content.encode())
    t = gi.target(harness, scope, tmp_path / "proj")
    assert t.path == path
    ch = gi.install(t, "enforce", tmp_path / "g.jsonl")
    assert ch.action == "installed" and "+" in ch.diff and gi.MARK in ch.diff
    doc = json.loads(path.read_text())
    before = json.loads(content)
    # the user's hooks are all still there, the guard's entries were added for Stop and SubagentStop
    for event, groups in before["hooks"].items():
        assert doc["hooks"][event][: len(groups)] == groups
    ours = [h for ev in gi.EVENTS for g in doc["hooks"][ev] for h in g["hooks"] if gi.MARK in h["command"]]
    assert len(ours) == 2 and all("--mode enforce" in h["command"] for h in ours)
    assert {k: v for k, v in doc.items() if k != "hooks"} == {k: v for k, v in before.items() if k != "hooks"}
    assert t.backup.read_bytes() == content.encode()
    # idempotent
    assert gi.install(t, "enforce", tmp_path / "g.jsonl").action == "unchanged"
    assert (
        len(
            [
                h
                for ev in gi.EVENTS
                for g in json.loads(path.read_text())["hooks"][ev]
                for h in g["hooks"]
                if gi.MARK in h["command"]
            ]
        )
        == 2
    )
    st = gi.status(t)
    assert st["installed"] and st["mode"] == "enforce" and st["events"] == ["Stop", "SubagentStop"]
    ch = gi.uninstall(t)
    assert ch.action == "restored"
    assert path.read_bytes() == content.encode()
    assert not t.backup.exists() and not t.state.exists()
    assert gi.uninstall(t).action == "absent"


def test_mode_change_then_uninstall_still_restores(tmp_path, home):
    path = home / ".claude" / "settings.json"
    path.parent.mkdir(parents=True)
    path.write_bytes(CLAUDE_SETTINGS.encode())
    t = gi.target("claude")
    gi.install(t, "observe", tmp_path / "g.jsonl")
    ch = gi.install(t, "enforce", tmp_path / "g.jsonl")
    assert ch.action == "updated" and "--mode observe" in ch.diff and "--mode enforce" in ch.diff
    assert t.backup.read_bytes() == CLAUDE_SETTINGS.encode()  # still the pre-install bytes
    gi.uninstall(t)
    assert path.read_bytes() == CLAUDE_SETTINGS.encode()


def test_install_creates_missing_file_and_uninstall_removes_it(tmp_path, home):
    t = gi.target("claude")
    gi.install(t, "observe", tmp_path / "g.jsonl")
    assert t.path.exists() and not t.backup.exists()
    gi.uninstall(t)
    assert not t.path.exists()


def test_user_edit_after_install_keeps_the_edit(tmp_path, home):
    path = home / ".claude" / "settings.json"
    path.parent.mkdir(parents=True)
    path.write_bytes(CLAUDE_SETTINGS.encode())
    t = gi.target("claude")
    gi.install(t, "observe", tmp_path / "g.jsonl")
    doc = json.loads(path.read_text())
    doc["theme"] = "dark"
    doc["hooks"]["Stop"].append({"hooks": [{"type": "command", "command": "later.sh"}]})
    path.write_text(json.dumps(doc, indent=4))
    ch = gi.uninstall(t)
    assert ch.action == "removed"
    after = json.loads(path.read_text())
    want = json.loads(CLAUDE_SETTINGS)
    want["theme"] = "dark"
    want["hooks"]["Stop"].append({"hooks": [{"type": "command", "command": "later.sh"}]})
    assert after == want


def test_not_json_is_never_overwritten(tmp_path, home):
    path = home / ".claude" / "settings.json"
    path.parent.mkdir(parents=True)
    path.write_text("{ this is broken")
    with pytest.raises(InputError):
        gi.install(gi.target("claude"), "observe", tmp_path / "g.jsonl")
    assert path.read_text() == "{ this is broken"


def test_cli_install_status_uninstall(tmp_path, home):
    path = home / ".claude" / "settings.json"
    path.parent.mkdir(parents=True)
    path.write_bytes(CLAUDE_SETTINGS.encode())
    log = tmp_path / "g.jsonl"
    log.write_text(json.dumps({"stallscan_guard": 1, "time": "2026-01-01T00:00:00.000Z", "decision": "block"}) + "\n")
    r = CliRunner().invoke(app, ["guard", "install", "--claude", "--log", str(log)])
    assert r.exit_code == 0, r.output
    assert "installed" in r.output and "+++" in r.output
    r = CliRunner().invoke(app, ["guard", "status", "--claude", "--format", "json"])
    st = json.loads(r.output)[0]
    assert (
        st["installed"] and st["mode"] == "observe" and st["log_records"] == 1 and st["log_decisions"] == {"block": 1}
    )
    r = CliRunner().invoke(app, ["guard", "uninstall", "--claude"])
    assert r.exit_code == 0 and "restored" in r.output
    assert path.read_bytes() == CLAUDE_SETTINGS.encode()
    r = CliRunner().invoke(app, ["guard", "install"])
    assert r.exit_code == 2 and "say which harness" in r.output
