"""The stall replay's data files (stallscan/data/*.toml) as Python objects (pure Python: no duckdb, no pyarrow).

`intent_signatures.toml`: narrated-intent signatures (intent / done / question regexes).
`stall_prompts.toml`: harness nudges (with the round kind each reacts to), other automatic prompts,
assistant-side sentinels, model-name -> provider rules. Both SQL (stall_data.install) and the
reference walk read them from here, and so does the live guard (stallscan.guard), which must start fast: this
module imports only the standard library.
"""

from __future__ import annotations

import os
import re
from functools import cache, lru_cache
from typing import Any, NamedTuple

from stallscan.store import toml_cache

# the stall replay's bounds: consecutive stalls re-prompted before the reply is delivered as it is (the
# default of every --retry-bound), and narrated-only rounds allowed before a nudge
RETRY_BOUND = 3
NARRATED_BOUND = 2

DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data")  # (no pathlib: start-up)
STRIP_RE = re.compile(r"^[ \t\n\r]+|[ \t\n\r]+$")  # the same class as stall_strip() in SQL
# intent announces an action; done / question / statement veto it; wait vetoes it only where the turn shows
# background work (intent_signatures.toml header)
SIGNATURE_KINDS = ("intent", "done", "question", "wait", "statement")


# NamedTuples, not dataclasses: importing dataclasses (and inspect) is a large share of the guard's start-up
class Signature(NamedTuple):
    id: str
    language: str
    kind: str  # intent | done | question | wait | statement
    regex: str
    citation: str
    max_chars: int | None = None
    cls: str | None = None  # the issue-25 class of silent ending an intent signature was written for
    decides: bool = False  # an intent that reads the whole last sentence: a done word inside it does not veto

    @property
    def compiled(self) -> re.Pattern[str]:
        return _compile(self.regex)

    @property
    def non_ascii(self) -> bool:
        """Every match holds a non-ASCII character (a CJK signature): a tail in plain ASCII cannot match, so
        the SQL skips those tails without running the regex (the regex still decides every other tail)."""
        return needs_non_ascii(self.regex)


class Background(NamedTuple):
    """A tool call that starts work which wakes the agent when done (a wait after it is a hand-off)."""

    id: str
    tool: str  # regex on the call's name
    arguments: str | None  # regex on the call's JSON arguments (None: any)
    citation: str

    def matches(self, name: str | None, arguments: str | None) -> bool:
        if name is None or not _compile(self.tool).search(name):
            return False
        return self.arguments is None or bool(_compile(self.arguments).search(arguments or ""))


class ApprovalMode(NamedTuple):
    """A turn run in a plan-approval mode: a first reply that is only a plan is a hand-off."""

    id: str
    meta_key: str
    value: str
    citation: str


class Prompt(NamedTuple):
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


class StallData(NamedTuple):
    version: str
    tail_chars: int
    signatures: tuple[Signature, ...]
    prompts: tuple[Prompt, ...]
    providers: tuple[tuple[str, str], ...]  # (regex, provider), first match wins
    background: tuple[Background, ...] = ()
    approval_modes: tuple[ApprovalMode, ...] = ()


@cache
def _compile(regex: str) -> re.Pattern[str]:
    # re.ASCII: \b and \w as in RE2 (DuckDB); `$` is end of text because texts are stripped first
    return re.compile(regex, re.ASCII)


@lru_cache(maxsize=1)
def load() -> StallData:
    sig = toml_cache.read(os.path.join(DATA, "intent_signatures.toml"))
    pr = toml_cache.read(os.path.join(DATA, "stall_prompts.toml"))
    sigs = tuple(
        Signature(
            s["id"],
            s["language"],
            s["kind"],
            s["regex"],
            s["citation"],
            s.get("max_chars"),
            s.get("class"),
            bool(s.get("decides", False)),
        )
        for s in sig["signature"]
    )
    background = tuple(
        Background(b["id"], b["tool"], b.get("arguments"), b["citation"]) for b in sig.get("background", [])
    )
    modes = tuple(ApprovalMode(m["id"], m["meta_key"], m["value"], m["citation"]) for m in sig.get("approval_mode", []))
    # the regexes are compiled when Python first matches with them (the guard, the reference walk), not here:
    # the SQL replay never does, and compiling the 39 cost 17 CPU ms of every report that replays stalls
    # (tests/unit/test_sig_prefilter.py compiles every one of them)
    for s in sigs:
        if s.kind not in SIGNATURE_KINDS:
            raise ValueError(f"signature {s.id}: unknown kind {s.kind!r}")
    prompts = tuple(
        [Prompt(n["id"], "nudge", n["reacts_to"], n["match"], n["text"], n["citation"]) for n in pr["nudge"]]
        + [Prompt(a["id"], "automatic", None, a["match"], a["text"], a["citation"]) for a in pr["automatic"]]
        + [Prompt(a["id"], "interrupt", None, a["match"], a["text"], a["citation"]) for a in pr["interrupt"]]
        + [Prompt(s["id"], "sentinel", s["kind"], s["match"], s["text"], s["citation"]) for s in pr["sentinel"]]
    )
    ids = [s.id for s in sigs] + [p.id for p in prompts] + [b.id for b in background] + [m.id for m in modes]
    if len(ids) != len(set(ids)):
        raise ValueError("duplicate ids in stallscan/data/*.toml")
    providers = tuple((p["regex"], p["provider"]) for p in pr["provider"])
    return StallData(
        f"signatures-v{sig['version']}+prompts-v{pr['version']}",
        int(sig["tail_chars"]),
        sigs,
        prompts,
        providers,
        background,
        modes,
    )


# non-ASCII characters that case folding maps to ASCII letters (KELVIN SIGN, LONG S, dotted / dotless I):
# under (?i) RE2 matches them with k, s and i, so they do not make a match non-ASCII
_FOLDS_TO_ASCII = frozenset("\u212a\u017f\u0130\u0131")


@cache
def needs_non_ascii(regex: str) -> bool:
    """True when every string the regex matches holds a character above U+007F: read from the regex's parse
    tree (Python's own parser: the file's regexes mean the same in RE2 and Python `re`). Whatever the walk
    does not know counts as 'may match ASCII', so a False is always safe."""
    from re import _parser  # type: ignore[attr-defined]  # (the standard library's regex parser)

    tree = _parser.parse(regex, re.ASCII)
    return _seq_needs(tree, bool(tree.state.flags & re.IGNORECASE))


def _char_needs(code: int, fold: bool) -> bool:
    """The character is above U+007F and, under (?i), none of its case variants is ASCII."""
    c = chr(code)
    may_be_ascii = fold and (c in _FOLDS_TO_ASCII or any(ord(x) < 0x80 for x in c.lower() + c.upper()))
    return code >= 0x80 and not may_be_ascii


def _seq_needs(items: Any, fold: bool) -> bool:
    return any(_item_needs(op, av, fold) for op, av in items)


def _item_needs(op: Any, av: Any, fold: bool) -> bool:
    from re import _constants as c  # type: ignore[attr-defined]

    if op is c.LITERAL:
        return _char_needs(av, fold)
    if op is c.IN:  # a class: every member non-ASCII (no negation, no category such as \\s)
        members = list(av)
        return bool(members) and all(
            (k is c.LITERAL and _char_needs(v, fold))
            or (k is c.RANGE and v[0] >= 0x80 and all(_char_needs(x, fold) for x in range(v[0], v[1] + 1)))
            for k, v in members
        )
    if op is c.SUBPATTERN:  # (group, add_flags, del_flags, pattern)
        group_fold = (fold or bool(av[1] & re.IGNORECASE)) and not av[2] & re.IGNORECASE
        return _seq_needs(av[3], group_fold)
    if op is c.BRANCH:  # (None, [alternatives])
        return all(_seq_needs(alt, fold) for alt in av[1])
    if op in (c.MAX_REPEAT, c.MIN_REPEAT, c.POSSESSIVE_REPEAT):  # (min, max, item)
        return av[0] >= 1 and _seq_needs(av[2], fold)
    return False  # ANY, NOT_LITERAL, AT, CATEGORY, ...: may match ASCII or nothing


def strip(text: str | None) -> str | None:
    return None if text is None else STRIP_RE.sub("", text)
