"""A test hook that stops an ingest at a chosen commit, so a crash test kills it exactly there.

`STALLSCAN_FAILPOINT=ingest.commit:N:ACTION` (read once per ingest run) acts right after the run's Nth
COMMIT (1-based; the last batch's commit counts too, before the closing CHECKPOINT):

- first one line `stallscan: failpoint ingest.commit N reached` on stderr, flushed;
- then `sleep`: block until the process is killed (a test waits for the line, then sends SIGKILL);
  or `exit`: leave at once with exit code 86, nothing rolled back, closed or checkpointed (a crash);
  or `pause`: wait, holding the database and its lock, until the process gets SIGUSR1, then go on and finish
  normally (a test holds a live ingest at a known commit while other processes try the database).

A run with fewer than N commits never reaches it and finishes normally. Unset or empty: no effect.
Anything else in the variable is refused (exit code 2) rather than ignored, so a typo cannot turn a
crash test into a plain run.
"""

from __future__ import annotations

import os
import signal
import sys
import time

from stallscan.store.errors import StallscanError

VARIABLE = "STALLSCAN_FAILPOINT"
EXIT_CODE = 86  # outside the documented 0-6: a test tells a failpoint exit from any real outcome
ACTIONS = ("sleep", "exit", "pause")


class Failpoint:
    """Counts the hits of one named point and acts on the Nth (a no-op when the variable names another)."""

    def __init__(self, name: str, spec: str | None) -> None:
        self.name, self.at, self.action, self.hits = name, 0, "", 0
        if not spec:
            return
        parts = spec.split(":")
        if len(parts) != 3 or not parts[1].isdigit() or int(parts[1]) < 1 or parts[2] not in ACTIONS:
            raise StallscanError(
                f"{VARIABLE}={spec!r} is not POINT:N:ACTION",
                hint=f"e.g. {VARIABLE}=ingest.commit:3:sleep (N counts from 1; ACTION is sleep, exit or pause)",
            )
        if parts[0] == name:
            self.at, self.action = int(parts[1]), parts[2]

    @classmethod
    def from_env(cls, name: str) -> Failpoint:
        return cls(name, os.environ.get(VARIABLE))

    def hit(self) -> None:
        if not self.at:
            return
        self.hits += 1
        if self.hits != self.at:
            return
        if self.action == "pause":  # blocked before the line is written: a SIGUSR1 sent on seeing it is never lost
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})
        sys.stderr.write(f"stallscan: failpoint {self.name} {self.at} reached\n")
        sys.stderr.flush()
        if self.action == "pause":
            signal.sigwait({signal.SIGUSR1})
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGUSR1})
            return
        if self.action == "exit":
            os._exit(EXIT_CODE)
        while True:  # until killed
            time.sleep(3600)
