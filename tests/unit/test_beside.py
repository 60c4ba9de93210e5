"""store.beside.Beside: a call on a thread of its own (the ingest's read ahead, the sweep's count of tool results left
out), its value or its error handed to the caller, as a one-worker pool did."""

from __future__ import annotations

import threading

import pytest

from stallscan.store.beside import Beside


def test_the_value_comes_back_from_the_thread() -> None:
    seen: list[str] = []

    def work(a: int, b: int) -> int:
        seen.append(threading.current_thread().name)
        return a + b

    beside = Beside(work, 2, 3)
    assert beside.result() == 5
    assert beside.result() == 5  # (again: the value is kept)
    assert seen and seen[0] != threading.current_thread().name


def test_the_error_is_raised_by_result_and_join_waits_without_raising() -> None:
    release = threading.Event()

    def work() -> None:
        release.wait(5)
        raise ValueError("count failed")

    beside = Beside(work)
    release.set()
    beside.join()  # (the caller's own failure path: waits, raises nothing)
    with pytest.raises(ValueError, match="count failed"):
        beside.result()
