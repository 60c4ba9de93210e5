"""A report's readers of the rule libraries (the signatures, stall prompts, secrets, prompt library, router
variants, measured precision) import no tomllib once stallscan.store.toml_cache holds their JSON copies."""

from __future__ import annotations

import subprocess
import sys

READERS = """
import sys
from stallscan.replay.boundary_variants import rule_entries
from stallscan.replay.labels import library_entries
from stallscan.replay.stall_data import measured_precision
from stallscan.replay.stall_rules import load
from stallscan.store.redact import patterns
load(); patterns(); rule_entries(); library_entries(); measured_precision()
print("tomllib" in sys.modules)
"""


def test_a_report_s_rule_readers_import_no_tomllib(tmp_path):
    env = {"STALLSCAN_CACHE": str(tmp_path), "PATH": "", "PYTHONDONTWRITEBYTECODE": "1"}
    run = [sys.executable, "-c", READERS]
    first = subprocess.run(run, capture_output=True, text=True, env=env, check=True).stdout.strip()
    again = subprocess.run(run, capture_output=True, text=True, env=env, check=True).stdout.strip()
    assert (first, again) == ("True", "False")  # the first run writes the copies, the next reads only them
