"""The stall replay's data files (stallscan/data/*.toml) as Python objects and as DuckDB tables.

`intent_signatures.toml`: narrated-intent signatures (intent / done / question regexes).
`precision.toml`: the rule's precision and recall measured on the hand-labelled truth set (tests/truth/).
`stall_prompts.toml`: harness nudges (with the round kind each reacts to), other automatic prompts,
assistant-side sentinels, model-name -> provider rules. Both SQL and the reference walk read them
from here, so the two implementations cannot drift apart on data.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa

DATA = Path(__file__).resolve().parents[1] / "data"
STRIP_RE = re.compile(r"^[ \t\n\r]+|[ \t\n\r]+$")  # the same class as stall_strip() in SQL


@dataclass(frozen=True)
class Signature:
    id: str
    language: str
    kind: str  # intent | done | question
    regex: str
    citation: str
    max_chars: int | None = None

    @property
    def compiled(self) -> re.Pattern[str]:
        return _compile(self.regex)


@dataclass(frozen=True)
class Prompt:
    id: str
    role: str  # nudge | automatic | interrupt | sentinel
    reacts_to: str | None  # nudges: dropped / no_tool / narrated / empty / length / stop_gate; sentinels: kind
    match: str  # exact | prefix | contains
    text: str
    citation: str

    def matches(self, stripped: str | None) -> bool:
        if stripped is None:
            return False
        if self.match == "exact":
            return stripped == self.text
        if self.match == "prefix":
            return stripped.startswith(self.text)
        return self.text in stripped


@dataclass(frozen=True)
class StallData:
    version: str
    tail_chars: int
    signatures: tuple[Signature, ...]
    prompts: tuple[Prompt, ...]
    providers: tuple[tuple[str, str], ...]  # (regex, provider), first match wins


@cache
def _compile(regex: str) -> re.Pattern[str]:
    # re.ASCII: \b and \w as in RE2 (DuckDB); `$` is end of text because texts are stripped first
    return re.compile(regex, re.ASCII)


@lru_cache(maxsize=1)
def load() -> StallData:
    sig = tomllib.loads((DATA / "intent_signatures.toml").read_text(encoding="utf-8"))
    pr = tomllib.loads((DATA / "stall_prompts.toml").read_text(encoding="utf-8"))
    sigs = tuple(
        Signature(s["id"], s["language"], s["kind"], s["regex"], s["citation"], s.get("max_chars"))
        for s in sig["signature"]
    )
    for s in sigs:
        if s.kind not in ("intent", "done", "question"):
            raise ValueError(f"signature {s.id}: unknown kind {s.kind!r}")
        _compile(s.regex)
    prompts = tuple(
        [Prompt(n["id"], "nudge", n["reacts_to"], n["match"], n["text"], n["citation"]) for n in pr["nudge"]]
        + [Prompt(a["id"], "automatic", None, a["match"], a["text"], a["citation"]) for a in pr["automatic"]]
        + [Prompt(a["id"], "interrupt", None, a["match"], a["text"], a["citation"]) for a in pr["interrupt"]]
        + [Prompt(s["id"], "sentinel", s["kind"], s["match"], s["text"], s["citation"]) for s in pr["sentinel"]]
    )
    ids = [s.id for s in sigs] + [p.id for p in prompts]
    if len(ids) != len(set(ids)):
        raise ValueError("duplicate ids in stallscan/data/*.toml")
    providers = tuple((p["regex"], p["provider"]) for p in pr["provider"])
    return StallData(
        f"signatures-v{sig['version']}+prompts-v{pr['version']}", int(sig["tail_chars"]), sigs, prompts, providers
    )


@lru_cache(maxsize=1)
def measured_precision() -> dict[str, Any] | None:
    """The figures of precision.toml (written by tests/real/intent_truth.py --write), plus `current`: whether
    they were measured on the signature data in use. None when the file is absent."""
    path = DATA / "precision.toml"
    if not path.is_file():
        return None
    d = tomllib.loads(path.read_text(encoding="utf-8"))
    return {**d, "current": d.get("data_version") == load().version}


def precision_line(p: dict[str, Any] | None) -> str:
    """One sentence on how far the narrated-intent counts can be trusted (for reports and the CLI)."""
    if not p:
        return "Narrated-intent precision: not measured (stallscan/data/precision.toml is missing)."
    stale = "" if p["current"] else f" on older signatures ({p['data_version']})"
    return (
        f"Narrated-intent precision, measured {p['measured_on']}{stale} on a hand-labelled truth set: "
        f"{p['false_alarms_real']} false alarms in {p['real_genuine']} real genuine endings "
        f"(95 % bound {p['false_alarm_upper95_per_1000']:g} per 1,000), {p['false_alarms_cases']} in "
        f"{p['handoff_cases']} hand-written hand-offs; precision {p['precision']:.0%}, recall {p['recall']:.0%} "
        f"of {p['positives']} plan-as-answer shapes."
    )


def strip(text: str | None) -> str | None:
    return None if text is None else STRIP_RE.sub("", text)


def install(con: duckdb.DuckDBPyConnection) -> StallData:
    """(Re)create the tables stall_signatures, stall_prompts, stall_providers, stall_settings from the files."""
    d = load()
    tables = {
        "stall_signatures": pa.table(
            {
                "ord": pa.array(range(len(d.signatures)), pa.int32()),
                "id": [s.id for s in d.signatures],
                "language": [s.language for s in d.signatures],
                "kind": [s.kind for s in d.signatures],
                "regex": [s.regex for s in d.signatures],
                "max_chars": pa.array([s.max_chars for s in d.signatures], pa.int32()),
                "citation": [s.citation for s in d.signatures],
            }
        ),
        "stall_prompts": pa.table(
            {
                "ord": pa.array(range(len(d.prompts)), pa.int32()),
                "id": [p.id for p in d.prompts],
                "role": [p.role for p in d.prompts],
                "reacts_to": pa.array([p.reacts_to for p in d.prompts], pa.string()),
                "match": [p.match for p in d.prompts],
                "text": [p.text for p in d.prompts],
                "citation": [p.citation for p in d.prompts],
            }
        ),
        "stall_providers": pa.table(
            {
                "ord": pa.array(range(len(d.providers)), pa.int32()),
                "regex": [r for r, _ in d.providers],
                "provider": [p for _, p in d.providers],
            }
        ),
        "stall_settings": pa.table({"key": ["data_version", "tail_chars"], "value": [d.version, str(d.tail_chars)]}),
    }
    for name, _stall_data in tables.items():  # read by DuckDB's replacement scan (no register():
        con.execute(f"CREATE OR REPLACE TABLE {name} AS SELECT * FROM _stall_data")  # works with a pending result)
    return d
