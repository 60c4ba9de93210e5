"""The stall replay's data files as DuckDB tables (the Python objects live in stall_rules.py), and the
measured precision of the narrated-intent rule (precision.toml).

`install(con)` writes the tables the SQL replay reads; `load`, `strip` and the record types are re-exported
from stallscan.replay.stall_rules (pure Python, also read by the reference walk and the live guard).
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

import duckdb

from stallscan.replay.stall_rules import DATA, STRIP_RE, Prompt, Signature, StallData, load, strip
from stallscan.store import toml_cache

__all__ = [
    "DATA",
    "STRIP_RE",
    "Prompt",
    "Signature",
    "StallData",
    "install",
    "load",
    "measured_precision",
    "precision_line",
    "strip",
]


@lru_cache(maxsize=1)
def measured_precision() -> dict[str, Any] | None:
    """The figures of precision.toml (written by tests/real/intent_truth.py --write), plus `current`: whether
    they were measured on the signature data in use. None when the file is absent."""
    path = Path(DATA) / "precision.toml"
    if not path.is_file():
        return None
    d = toml_cache.read(path)  # (its JSON copy: no tomllib import, no parse, in a report)
    return {**d, "current": d.get("data_version") == load().version}


def precision_line(p: dict[str, Any] | None) -> str:
    """One sentence on how far the narrated-intent counts can be trusted (for reports and the CLI)."""
    if not p:
        return "Narrated-intent precision: not measured (stallscan/data/precision.toml is missing)."
    stale = "" if p["current"] else f" on older signatures ({p['data_version']})"
    if p.get("real_genuine_all") and p.get("labagents_positives"):  # issue 25: measured on real endings
        return (
            f"Silent-ending detector, measured {p['measured_on']}{stale} on hand-labelled real endings: "
            f"recall {p['labagents_detected'] / p['labagents_positives']:.0%} of {p['labagents_positives']} real "
            f"plan-as-answer endings; {p['false_alarms_real_all']} false alarms in {p['real_genuine_all']} genuine "
            f"real endings (95 % bound {p['false_alarm_upper95_per_1000_all']:g} per 1,000); on shapes, recall "
            f"{p['recall']:.0%} of {p['positives']} and {p['false_alarms_cases']} false alarms in "
            f"{p['handoff_cases']} hand-written hand-offs (docs/rules.md)."
        )
    return (
        f"Narrated-intent precision, measured {p['measured_on']}{stale} on a hand-labelled truth set: "
        f"{p['false_alarms_real']} false alarms in {p['real_genuine']} real genuine endings "
        f"(95 % bound {p['false_alarm_upper95_per_1000']:g} per 1,000), {p['false_alarms_cases']} in "
        f"{p['handoff_cases']} hand-written hand-offs; precision {p['precision']:.0%}, recall {p['recall']:.0%} "
        f"of {p['positives']} plan-as-answer shapes."
    )


def install(con: duckdb.DuckDBPyConnection) -> StallData:
    """(Re)create the tables stall_signatures, stall_background, stall_approval_modes, stall_prompts, stall_providers,
    stall_settings from the files."""
    import pyarrow as pa  # only when the rule tables are (re)installed

    from stallscan.store.arrow import column, strings, table

    d = load()
    tables = {
        "stall_signatures": table(
            {
                "ord": column(range(len(d.signatures)), pa.int32()),
                "id": strings([s.id for s in d.signatures]),
                "language": strings([s.language for s in d.signatures]),
                "kind": strings([s.kind for s in d.signatures]),
                "regex": strings([s.regex for s in d.signatures]),
                "max_chars": column([s.max_chars for s in d.signatures], pa.int32()),
                "citation": strings([s.citation for s in d.signatures]),
                "class": strings([s.cls for s in d.signatures]),
                "decides": column([s.decides for s in d.signatures], pa.bool_()),
                # every match holds a non-ASCII character: stall_sig_match.sql skips ASCII-only tails
                "non_ascii": column([s.non_ascii for s in d.signatures], pa.bool_()),
            }
        ),
        "stall_background": table(
            {
                "ord": column(range(len(d.background)), pa.int32()),
                "id": strings([b.id for b in d.background]),
                "tool": strings([b.tool for b in d.background]),
                "arguments": strings([b.arguments for b in d.background]),
                "citation": strings([b.citation for b in d.background]),
            }
        ),
        "stall_approval_modes": table(
            {
                "ord": column(range(len(d.approval_modes)), pa.int32()),
                "id": strings([m.id for m in d.approval_modes]),
                "meta_key": strings([m.meta_key for m in d.approval_modes]),
                "value": strings([m.value for m in d.approval_modes]),
                "citation": strings([m.citation for m in d.approval_modes]),
            }
        ),
        "stall_prompts": table(
            {
                "ord": column(range(len(d.prompts)), pa.int32()),
                "id": strings([p.id for p in d.prompts]),
                "role": strings([p.role for p in d.prompts]),
                "reacts_to": strings([p.reacts_to for p in d.prompts]),
                "match": strings([p.match for p in d.prompts]),
                "text": strings([p.text for p in d.prompts]),
                "citation": strings([p.citation for p in d.prompts]),
            }
        ),
        "stall_providers": table(
            {
                "ord": column(range(len(d.providers)), pa.int32()),
                "regex": strings([r for r, _ in d.providers]),
                "provider": strings([p for _, p in d.providers]),
            }
        ),
        "stall_settings": table(
            {"key": strings(["data_version", "tail_chars"]), "value": strings([d.version, str(d.tail_chars)])}
        ),
    }
    for name, _stall_data in tables.items():  # read by DuckDB's replacement scan (no register():
        con.execute(f"CREATE OR REPLACE TABLE {name} AS SELECT * FROM _stall_data")  # works with a pending result)
    return d
