"""The console script's entry (stallscan.entry.main) leaves the interpreter's exit no objects to collect: it
registers gc.freeze as an exit handler, and only that (nothing frozen while the process goes on)."""

from __future__ import annotations

import atexit
import gc
import subprocess
import sys

import pytest

from stallscan import entry


def test_main_registers_the_freeze_for_the_exit(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    registered: list[object] = []
    monkeypatch.setattr(atexit, "register", registered.append)
    monkeypatch.setattr(sys, "argv", ["stallscan", "--version"])
    before = gc.get_freeze_count()
    entry.main()
    assert registered == [gc.freeze]
    assert gc.get_freeze_count() == before  # (not frozen now: at the exit)
    assert capsys.readouterr().out.startswith("stallscan ")


def test_exit_handlers_registered_by_the_command_still_run() -> None:
    code = (
        "import atexit, sys\n"
        "sys.argv = ['stallscan', '--version']\n"
        "from stallscan.entry import main\n"
        "main()\n"
        "atexit.register(lambda: print('handler ran'))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.splitlines()[-1] == "handler ran"
