"""A call run on a thread of its own while the caller goes on: `result()` hands back its value or raises its error
in the caller's thread. Used where one piece of work runs beside another: the ingest's next batch read
(ingest/read_ahead.py) and its parse (ingest/batch.py), the sweep's count of tool results left out
(sweep/core.py), the report's second lane made ahead (report/lanes.Ready) and its early checkpoint
(store/checkpoint.py). Not concurrent.futures:
its import, with logging's, costs a small run's start-up milliseconds (docs/benchmarks.md, "one24")."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any


class Beside:
    def __init__(self, fn: Callable[..., Any], *args: Any, name: str = "stallscan-beside") -> None:
        self._out: Any = None
        self._err: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(fn, args), name=name)
        self._thread.start()

    def _run(self, fn: Callable[..., Any], args: tuple[Any, ...]) -> None:
        try:
            self._out = fn(*args)
        except BaseException as exc:  # (raised in the caller's thread by result())
            self._err = exc

    def join(self) -> None:
        """Wait for the call to end; its error, if any, is not raised (the caller's own failure path)."""
        self._thread.join()

    def result(self) -> Any:
        self._thread.join()
        if self._err is not None:
            raise self._err
        return self._out
