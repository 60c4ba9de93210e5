"""The report's first ingest imports its batches module (numpy, pyarrow) on a thread while the database opens
(stallscan.cli.report_cmd._import_beside): the module is loaded there, and an error of that import is not raised on
the thread but by the caller's own import, as before."""

from __future__ import annotations

import importlib
import sys
import threading

import pytest

from stallscan.cli.report_cmd import _import_beside


def _join_imports() -> None:
    for t in threading.enumerate():
        if t.name == "stallscan-import":
            t.join()


def test_the_module_is_imported_on_a_thread(tmp_path, monkeypatch):
    (tmp_path / "beside_probe_ok.py").write_text("import threading\nWHERE = threading.current_thread().name\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "beside_probe_ok", raising=False)
    _import_beside("beside_probe_ok")
    _join_imports()
    assert sys.modules["beside_probe_ok"].WHERE == "stallscan-import"  # (imported there, before any import here)


def test_an_import_error_is_the_callers(tmp_path, monkeypatch):
    (tmp_path / "beside_probe_bad.py").write_text("raise ValueError('broken module')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "beside_probe_bad", raising=False)
    failed: list[BaseException] = []
    monkeypatch.setattr(threading, "excepthook", lambda args: failed.append(args.exc_value))
    _import_beside("beside_probe_bad")
    _join_imports()
    assert failed == []  # (nothing raised on the thread)
    with pytest.raises(ValueError, match="broken module"):
        importlib.import_module("beside_probe_bad")
