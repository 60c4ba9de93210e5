"""Any split into appends, any chunk size: the base tables equal a one-shot ingest, column for column (issue 24).

Over every file of every format in the real corpus (``../shared/data/real`` or $STALLSCAN_REAL_DATA) and
in sample_logs/: the file is written in parts (cut points anywhere: between lines, inside a line, the
same size twice = a bare touch), each part ingested into the same database with a chunk size
(STALLSCAN_BATCH_BYTES, here the module's BATCH_BYTES) as small as a sixth of the file, then the whole
file. events, skipped and rejects (and the files row's line accounting) must equal, column by column, an
ingest of the whole file at once into a fresh database. The expected side is that one-shot ingest, never a
stored figure. Codex tokens_in / tokens_out were NULL after any second pass before fmt_resume.

Default tier: 12 hypothesis examples (`-m slow` or STALLSCAN_HYPOTHESIS=full: 24), and one of the four Codex
second passes per rollout, in turn (each pass on a quarter of them, at least one); a line-oriented file over CAP bytes is
read as its first lines up to CAP bytes (a file of its own: the same formats, multi-chunk reads, resumes
inside and at chunk ends, at a fraction of the bytes; whole JSON documents are never cut). `-m slow`: all four on every rollout; whole files; the sweep, every line boundary of
files with at most 8 lines and 8 evenly spaced ones of the others ($STALLSCAN_SWEEP_CUTS), each
with a chunk of a quarter of the file ($STALLSCAN_SWEEP_KINDS=real/codex,...: only those folders).
"""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import stallscan.ingest.run as ing
from stallscan.store.db import connect
from tests.helpers import ROOT, SAMPLES, examples

TABLES = {
    "events": "file, line, part",
    "skipped": "file, line",
    "rejects": "file, line",
    "files": "path",
}
# files columns that describe the run, not the content (when, how far a pass got, where a next one resumes)
RUN_COLUMNS = {
    "ingested_at",
    "mtime",
    "consumed_bytes",
    "consumed_lines",
    "ends_newline",
    "pending_bytes",
    "resume_line",
    "resume_offset",
    "head_hash",
    "tail_hash",
    "ctx_session",
    "ctx_model",
    "ctx_turn",
}
SKIP_NAMES = {"PROVENANCE.md", "README.md", "NOTES.md", "check_samples.py"}
# the default tier's bytes per line-oriented file: its first lines up to this size (the slow tier: whole)
CAP = 256 * 1024


def _real_root() -> Path:
    env = os.environ.get("STALLSCAN_REAL_DATA")
    return Path(env) if env else ROOT.parent / "shared" / "data" / "real"


@cache
def corpus() -> tuple[Path, ...]:
    out = []
    for root in (_real_root(), SAMPLES):
        if root.is_dir():
            out += sorted(p for p in root.rglob("*") if p.is_file() and p.name not in SKIP_NAMES)
    return tuple(out)


@cache
def content(src: Path, whole: bool = False) -> bytes:
    """The bytes a test writes for `src`: the whole file, or (whole=False) its lines within the first CAP
    bytes when it is longer and line-oriented (not one JSON document: a cut one is not the same format)."""
    data = src.read_bytes()
    if whole or len(data) <= CAP or src.suffix == ".json":
        return data
    return data[: data.rfind(b"\n", 0, CAP) + 1]


def _tables(con) -> dict[str, pa.Table]:
    out = {}
    for t, order in TABLES.items():
        cols = [r[0] for r in con.execute(f"DESCRIBE {t}").fetchall() if t != "files" or r[0] not in RUN_COLUMNS]
        out[t] = con.sql(f"SELECT {', '.join(cols)} FROM {t} ORDER BY {order}").to_arrow_table()
    return out


def differences(got: dict[str, pa.Table], want: dict[str, pa.Table]) -> list[str]:
    """'table.column' for every column that differs (or 'table: n rows, want m')."""
    out = []
    for t, w in want.items():
        g = got[t]
        if g.num_rows != w.num_rows:
            out.append(f"{t}: {g.num_rows} rows, want {w.num_rows}")
            continue
        out += [f"{t}.{c}" for c in w.column_names if not g.column(c).equals(w.column(c))]
    return out


def ingest_in_parts(data: bytes, dest: Path, cuts: list[int], chunk: int | None, monkeypatch) -> dict[str, pa.Table]:
    """Write data at dest in parts (each a prefix of `cuts` bytes, then the whole), ingest after each."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    con = connect(":memory:")
    if chunk:
        monkeypatch.setattr(ing, "BATCH_BYTES", chunk)
    try:
        for i, cut in enumerate([*cuts, len(data)]):
            dest.write_bytes(data[:cut])
            os.utime(dest, ns=(10**18 + i * 10**9, 10**18 + i * 10**9))  # a new mtime even for the same size
            ing.ingest_paths(con, [str(dest)])
    finally:
        monkeypatch.undo()
    got = _tables(con)
    con.close()
    return got


_ONE_SHOT: dict[tuple[Path, int], dict[str, pa.Table]] = {}


def one_shot(data: bytes, dest: Path) -> dict[str, pa.Table]:
    if (dest, len(data)) not in _ONE_SHOT:
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(data)
        os.utime(dest, ns=(10**18, 10**18))
        con = connect(":memory:")
        ing.ingest_paths(con, [str(dest)])
        _ONE_SHOT[dest, len(data)] = _tables(con)
        con.close()
    return _ONE_SHOT[dest, len(data)]


def _dest(base: Path, src: Path) -> Path:
    """A fixed place per source file (the `file` column must match the one-shot's), same name (detection)."""
    return base / str(corpus().index(src)) / src.name


def kind_of(src: Path) -> str:
    """The corpus folder a file is in (real/<harness> or sample_logs/<harness>): one per format, mostly."""
    root = _real_root() if _real_root() in src.parents else SAMPLES
    return f"{'real' if root != SAMPLES else 'sample'}/{src.relative_to(root).parts[0]}"


@cache
def by_kind() -> dict[str, tuple[Path, ...]]:
    out: dict[str, list[Path]] = {}
    for p in corpus():
        out.setdefault(kind_of(p), []).append(p)
    return {k: tuple(v) for k, v in sorted(out.items())}


@st.composite
def splits(draw):
    kind = draw(st.sampled_from(sorted(by_kind())))  # each folder as likely as any other, whatever its size
    src = draw(st.sampled_from(by_kind()[kind]))
    data = content(src)
    lines = [i + 1 for i, b in enumerate(data) if b == 10] or [0]
    point = st.one_of(st.sampled_from(lines), st.integers(0, len(data)))  # a line boundary or any byte
    cuts = sorted(draw(st.lists(point, min_size=1, max_size=3)))
    chunk = draw(st.one_of(st.none(), st.integers(max(len(data) // 6, 4096), max(len(data), 4096))))
    return src, cuts, chunk


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    if not any(_real_root().rglob("*.jsonl")) if _real_root().is_dir() else True:
        pytest.skip(f"real transcripts not found at {_real_root()} (set STALLSCAN_REAL_DATA)")
    return tmp_path_factory.mktemp("splits")


def split_equals_one_shot(base: Path, monkeypatch, case) -> None:
    src, cuts, chunk = case
    dest = _dest(base, src)
    want = one_shot(content(src), dest)
    got = ingest_in_parts(content(src), dest, cuts, chunk, monkeypatch)
    assert differences(got, want) == [], (src, cuts, chunk)


# 12 examples in the default tier (each ingests a file up to four times, about 1.4 CPU s); the slow tier draws
# the full 24 (test_any_split_full_count below), as does STALLSCAN_HYPOTHESIS=full here
@settings(
    max_examples=examples(24, default=12),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(case=splits())
def test_any_split_and_chunk_size_equals_one_shot(base, monkeypatch, case):
    split_equals_one_shot(base, monkeypatch, case)


@pytest.mark.slow
@settings(max_examples=24, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=splits())
def test_any_split_full_count(base, monkeypatch, case):
    split_equals_one_shot(base, monkeypatch, case)


# the second passes of a Codex rollout: grown at k quarters, read whole (None) or in chunks of a quarter; 4: touched
SECOND_PASSES = ((2, None), (2, "quarter"), (3, "quarter"), (4, None))


def second_passes(base: Path, monkeypatch, every: bool) -> None:
    """The issue's case, pinned: each real Codex rollout cut at quarters, then grown, or touched; read
    whole or in chunks of a quarter (the turn_id of an event at a chunk's resume line was the batch end's).
    every=False: rollout i takes pass i (mod 4), so each pass runs on a quarter of the rollouts (all four
    on each when there are fewer than four); every=True (slow tier): all four on each rollout."""
    rollouts = [p for p in corpus() if "/codex/" in str(p) and p.suffix == ".jsonl"]
    if not rollouts:
        pytest.skip("no Codex rollouts in the corpus")
    for i, src in enumerate(rollouts):
        data = content(src, whole=every)
        dest = _dest(base, src)
        want = one_shot(data, dest)
        assert want["events"].column("tokens_out").null_count < want["events"].num_rows  # the file has tokens
        quarter = max(len(data) // 4, 4096)  # a chunk size: each chunk boundary is a resume point too
        picked = SECOND_PASSES if every or len(rollouts) < 4 else [SECOND_PASSES[i % 4]]
        for k, chunk in picked:
            cut = data.rfind(b"\n", 0, len(data) * k // 4) + 1 if k < 4 else len(data)
            got = ingest_in_parts(data, dest, [cut], quarter if chunk else None, monkeypatch)
            assert differences(got, want) == [], (src, cut, chunk)


def test_codex_tokens_survive_a_second_pass(base, monkeypatch):
    second_passes(base, monkeypatch, every=False)


@pytest.mark.slow
def test_codex_tokens_survive_every_second_pass(base, monkeypatch):
    second_passes(base, monkeypatch, every=True)


def test_formats_read_whole_are_never_cut_at_a_chunk(base, monkeypatch):
    """aider and gemini_cli files cannot be read on from a line (appendable=False): a chunk boundary must
    not cut them either (their session header and start time were lost past the first chunk)."""
    picked = [p for p in corpus() if kind_of(p) in ("real/aider", "real/gemini-cli") and p.suffix != ".json"]
    if not picked:
        pytest.skip("no aider / gemini_cli files in the corpus")
    for src in picked:
        data = content(src)
        mid = data.rfind(b"\n", 0, len(data) // 2) + 1
        want = one_shot(data, _dest(base, src))
        got = ingest_in_parts(data, _dest(base, src), [mid], max(len(data) // 4, 1024), monkeypatch)
        assert differences(got, want) == [], src


def sweep(base: Path, monkeypatch, per_file: int = 8, log=None) -> dict[str, list[int]]:
    """Every line boundary of files with at most `per_file` lines, `per_file` evenly spaced ones of the
    others, one cut each, with a chunk of a quarter of the file. Returns format dir -> [tries, survived]."""
    tally: dict[str, list[int]] = {}
    kinds = [k for k in os.environ.get("STALLSCAN_SWEEP_KINDS", "").split(",") if k]  # e.g. real/codex
    for src in corpus():
        if kinds and kind_of(src) not in kinds:
            continue
        data = content(src, whole=True)
        lines = [i + 1 for i, b in enumerate(data) if b == 10][:-1] or [len(data) // 2]
        step = max(1, len(lines) // per_file)
        want = one_shot(data, _dest(base, src))
        kind = kind_of(src)
        for cut in lines[::step]:
            got = ingest_in_parts(data, _dest(base, src), [cut], max(len(data) // 4, 4096), monkeypatch)
            t = tally.setdefault(kind, [0, 0])
            t[0] += 1
            lost = differences(got, want)
            t[1] += not lost
            if lost and log:
                log(f"lost {lost} at byte {cut} of {src}")
        if log:
            log(f"{kind}: {tally[kind]} after {src.name}")
    return tally


@pytest.mark.slow
def test_sweep_every_file_at_many_cut_points(base, monkeypatch, capsys):
    with capsys.disabled():
        tally = sweep(base, monkeypatch, per_file=int(os.environ.get("STALLSCAN_SWEEP_CUTS") or 8), log=print)
        for kind, (tries, ok) in sorted(tally.items()):
            print(f"{kind:24} tries {tries:5}  survived {ok:5}  lost {tries - ok:5}")
    assert all(ok == tries for tries, ok in tally.values()), tally
