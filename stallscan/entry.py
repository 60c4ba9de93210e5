"""The `stallscan` console script and `python -m stallscan`: two answers before typer loads, then the typer
app (stallscan.cli:app) for everything else.

* `stallscan --version`, exactly that: the line the root command's --version option prints.
* `stallscan report [PATH]... [options]`, first from the memo's mirror beside the database
  (stallscan.report.mirror: valid for one exact state of the database file, read with os, sys and marshal
  only, no duckdb), else when the report data is memoised in the database for these options
  (stallscan.report.memo) and every transcript the paths name has the size and modification time its
  `files` row records: the data is read on a read-only connection and printed or written as the command
  prints or writes it, with the same stderr lines (stallscan.report.emit; stallscan.report.output holds what
  both run). Such a memo hit, and a report the typer command computed, then write the mirror for the next
  repeat (after the output, the database closed; never an error).

Importing typer, click and the pydantic its parser loads costs more than the rest of a memo hit, hence this
module. It serves only what it fully understands and hands anything else to the typer command, which does
the whole work and says what is wrong: an option not in REPORT_OPTIONS (--help, --from-parquet, ...), a
value that is not plainly a count or a number, an option given twice, a missing or locked database, a new,
changed or unreadable file, a filter naming nothing, a memo miss, any error. Nothing is printed before the
answer is known, so a hand-off never repeats output. REPORT_OPTIONS is tied to the typer command's options
(flags, parameter names, kinds, defaults) by tests/functional/test_startup.py.
"""

from __future__ import annotations

import atexit
import gc
import os
import sys

from stallscan.store.version import __version__

TYPE_CHECKING = False  # (typing is not imported: it costs a tenth of the start-up this module saves)
if TYPE_CHECKING:
    from typing import Any

    from stallscan.ingest.result import IngestResult

# `stallscan report`'s options this module serves: flag -> (parameter of stallscan.cli.report_cmd.report,
# kind). Kinds: "flag" (a switch, no value), "str", "int", "float", "list" (a repeatable str). Defaults:
# ReportOptions' field of that name, else False for a switch and None for the rest (DEFAULTS).
REPORT_OPTIONS = {
    "--db": ("db", "str"),
    "--format": ("out", "str"),
    "--json": ("as_json", "flag"),
    "--output": ("output", "str"),
    "-o": ("output", "str"),
    "--full": ("full", "flag"),
    "--section": ("section", "list"),
    "--bootstrap": ("bootstrap", "int"),
    "--threshold": ("threshold", "float"),
    "--retry-bound": ("retry_bound", "int"),
    "--since": ("since", "str"),
    "--until": ("until", "str"),
    "--harness": ("harness", "list"),
    "--model": ("model", "list"),
    "--limit": ("limit", "int"),
    "--config": ("config", "str"),
    "--strict": ("strict", "flag"),  # (parsed so that it is known; a --strict report is the CLI's)
}
# the command's options left to typer: help, and the parquet report (not memoised)
LEFT_TO_TYPER = ("--help", "-h", "--from-parquet", "--events")


# DuckDB's allocator (its bundled jemalloc) hands freed pages back to the system after a short decay, so a
# first report (ingest, labels, replays: 4-7 s of statements that free and take hundreds of MB each) maps
# the same memory again and again: 360-380k page faults, 1.3-1.5 s of system CPU. Freed pages kept 10 s
# (jemalloc's own default) are reused instead: 27 % fewer faults, 0.2-0.35 s less system CPU, peak RSS 35-75
# MB higher (docs/benchmarks.md, first17). Read once, when duckdb is loaded: set before anything imports it;
# a value the user set is kept.
ALLOCATOR_CONF = ("DUCKDB_JE_MALLOC_CONF", "dirty_decay_ms:10000")
# numpy's OpenBLAS starts a worker thread per further CPU when numpy loads, and each spins (sched_yield) for about
# 2^28 cycles before it sleeps, whether or not a BLAS routine ever runs: 0.05-0.1 CPU s of every command that
# imports numpy (`python -c "import numpy"`, 10 alternated runs: 0.21 -> 0.13 CPU s at the median). stallscan's
# only BLAS products (stallscan/sweep/bootstrap.py: (2 x sessions) by (sessions x resamples) at most 2^18 cells,
# integer terms held exactly, so the same sums in any order) are too small for threads to pay. Read once, when
# OpenBLAS loads: set before anything imports numpy; a value the user set is kept (docs/benchmarks.md, "ing29";
# "one29": numpy's import on the serial start of the report after one new session about 0.05 s shorter).
BLAS_THREADS = ("OPENBLAS_NUM_THREADS", "1")


def main() -> None:
    os.environ.setdefault(*ALLOCATOR_CONF)
    os.environ.setdefault(*BLAS_THREADS)
    # at the exit, after the command's own exit handlers (registered later, run earlier): every object moved out
    # of the collector's generations, so the interpreter's last collections do not walk every object the command
    # loaded (numpy, pyarrow, duckdb, typer) and free them cycle by cycle; the memory goes back with the process.
    # The report after one new session spent some 50 M instructions (about 15 ms) there (docs/benchmarks.md,
    # "one27"). Only at the exit: a caller that runs main() in-process (tests) keeps its collector until then.
    atexit.register(gc.freeze)
    argv = sys.argv[1:]
    if argv == ["--version"]:
        sys.stdout.write(f"stallscan {__version__}\n")
        return
    if argv[:1] == ["report"] and _report(argv[1:]):
        return
    parsed = parse_report(argv[1:]) if argv[:1] == ["report"] else None
    if parsed is not None:  # the command itself, without typer's parser (stallscan.cli.report_cmd.run_parsed)
        from stallscan.cli.report_cmd import run_parsed

        try:
            run_parsed(*parsed, stats_changed=_STATS_CHANGED[0] if _STATS_CHANGED else None)
        except SystemExit as exc:
            if not exc.code:
                _mirror_after_command(argv[1:])
            raise
        _mirror_after_command(argv[1:])
        return
    from stallscan.cli import app

    if argv[:1] != ["report"]:
        app(prog_name="stallscan")
        return
    try:
        app(prog_name="stallscan")
    except SystemExit as exc:
        if not exc.code:  # the report was computed (or served) and printed: mirror what a repeat prints
            _mirror_after_command(argv[1:])
        raise
    _mirror_after_command(argv[1:])


# ReportOptions' defaults (stallscan.report.section, which imports duckdb; tests/functional/test_startup.py
# ties them to the typer command's)
DEFAULTS = {"bootstrap": 1000, "threshold": 2.0, "retry_bound": 3, "limit": 20}


def defaults() -> dict[str, Any]:
    """Parameter -> default, for every parameter REPORT_OPTIONS names."""
    return {name: DEFAULTS.get(name, False if kind == "flag" else None) for name, kind in REPORT_OPTIONS.values()}


def default_db_path() -> str:
    """stallscan.store.db.default_db_path, without importing duckdb (tests/test_report_mirror.py ties them)."""
    return os.environ.get("STALLSCAN_DB") or "stallscan.duckdb"


def _value(kind: str, text: str) -> object:
    """The value of an int or float option when it is plainly one (digits; a float may have one dot between
    digits), else None."""
    if kind == "int":
        return int(text) if text.isascii() and text.isdigit() else None
    if kind == "float":
        whole, dot, frac = text.partition(".")
        plain = whole.isascii() and whole.isdigit() and (not dot or (frac.isascii() and frac.isdigit()))
        return float(text) if plain else None
    return text


def parse_report(args: list[str]) -> tuple[list[str], dict[str, Any]] | None:
    """(paths, parameter -> value) of `report ARGS`, or None when anything is not plainly understood."""
    values = defaults()
    paths: list[str] = []
    given: set[str] = set()
    rest = list(args)
    while rest:
        arg = rest.pop(0)
        if not arg.startswith("-"):
            paths.append(arg)
            continue
        flag, eq, text = arg.partition("=") if arg.startswith("--") else (arg, "", "")
        if flag not in REPORT_OPTIONS:
            return None
        name, kind = REPORT_OPTIONS[flag]
        if name in given and kind != "list":
            return None
        given.add(name)
        if kind == "flag":
            if eq:
                return None
            values[name] = True
            continue
        if not eq:
            if not rest:
                return None
            text = rest.pop(0)
        value = _value(kind, text)
        if value is None or not text or text.startswith("-"):
            return None
        values[name] = [*(values[name] or []), value] if kind == "list" else value
    return paths, values


def _report(args: list[str]) -> bool:
    """Serve `report ARGS` from the mirror, else from the memo; False: nothing was printed, the typer
    command runs instead."""
    parsed = parse_report(args)
    if parsed is None:
        return False
    paths, v = parsed
    _STATS_CHANGED.clear()  # (this lookup's finding only)
    try:
        hit = _mirror_hit(paths, v)
        if hit is None:
            db = v["db"] or default_db_path()
            if db != ":memory:" and not os.path.lexists(db):
                return False  # (no database, no memo: the walks of _snapshot and _memo_hit would find nothing)
            before = _snapshot(paths, v)
            found = _memo_hit(paths, v)
    except Exception:  # any doubt: the typer command does the whole work and says what went wrong
        return False
    except KeyboardInterrupt:  # nothing printed yet: as the command ends on ^C
        sys.stderr.write("interrupted\n")
        raise SystemExit(130) from None
    if hit is not None:
        _serve(*hit, v)
        return True
    if found is None:
        return False
    data, fmt, ingested = found
    import json

    from stallscan.report.emit import emit, guarded, stderr_of

    text = json.dumps(data, default=str)  # (before emit adds to it)
    doc = guarded(lambda: emit(data, fmt, stderr_of(ingested), v))
    _remember(paths, v, before, text, ingested, {fmt: doc} if doc is not None else {})
    return True


def _mirror_hit(paths: list[str], v: dict[str, Any]) -> tuple[Any, dict[str, Any], str, str | None] | None:
    """(mirror, entry, format, the stored document or None) when the mirror beside the database answers
    (stallscan.report.mirror); what is printed is read here, before anything is."""
    from stallscan.report import mirror
    from stallscan.report.output import pick_format

    fmt = pick_format(v["out"], v["as_json"], v["output"])
    path = v["db"] or default_db_path()
    if v["strict"] or path == ":memory:" or (v["output"] and not _writable(v["output"])):
        return None
    m = mirror.load(path)
    entry = mirror.find(m, paths, v) if m is not None else None
    if m is None or entry is None or not set(v["section"] or []) <= set(entry["sections"]):
        return None
    span = entry["spans"].get(f"doc:{fmt}")
    if span is not None:
        return m, entry, fmt, m.text(span)
    import json

    entry["loaded"] = json.loads(m.text(entry["data"]))  # (the data, to draw this format from)
    return m, entry, fmt, None


def _serve(m: Any, entry: dict[str, Any], fmt: str, doc: str | None, v: dict[str, Any]) -> None:
    """Print a mirror hit: the stored document (or the report drawn from the stored data), the stored lines."""
    from stallscan.report.emit import emit, guarded

    stderr = (entry["stderr"], entry["note_text"], entry["note"])
    if doc is not None:
        guarded(lambda: emit(None, fmt, stderr, v, doc))
        return
    data = entry.pop("loaded")
    drawn = guarded(lambda: emit(data, fmt, stderr, v))
    if drawn is not None:  # a format not asked for before: stored for the next repeat

        def store() -> None:
            from stallscan.report import mirror

            docs = {k[4:]: m.text(s) for k, s in entry["spans"].items() if k.startswith("doc:")}
            kept = {k: x for k, x in entry.items() if k not in ("spans", "walk", "data")}
            text, walk = m.text(entry["data"]), m.obj(entry["walk"])
            mirror.save(m.header["db"][0], m.header["db"], kept, walk, text, {**docs, fmt: drawn}, m)

        _quietly(store)


def _quietly(work: Any) -> None:
    """Mirror upkeep after the answer was printed: never an error, never a traceback."""
    try:
        work()
    except (Exception, KeyboardInterrupt):
        return


# the database whose `files` rows the last _memo_hit found out of date for its paths (the command then
# ingests without looking them up again: stallscan.cli.report_cmd.run_parsed)
_STATS_CHANGED: list[str] = []


def _memo_hit(
    paths: list[str], v: dict[str, Any], stored: tuple[str, str, list[tuple[Any, ...]]] | None = None
) -> tuple[dict[str, Any], str, IngestResult | None] | None:
    """(report data, format, the no-change ingest's result when paths were given), or None. stored: what the
    command just stored in the memo of a database (stallscan.cli.report_cmd.STORED): its path, the data's
    JSON text and the `files` rows' stats, read as a lookup on the closed file would read them."""
    from stallscan.report import memo
    from stallscan.report.output import check_filters, pick_format, report_options
    from stallscan.report.registry import names
    from stallscan.store.db import peek

    fmt = pick_format(v["out"], v["as_json"], v["output"])
    if v["strict"]:  # its checks and notes are the CLI's (stallscan.cli.accounting)
        return None
    if not set(v["section"] or []) <= set(names()) or (v["output"] and not _writable(v["output"])):
        return None
    opts = report_options(
        db=v["db"],
        **{
            k: v[k]
            for k in ("threshold", "retry_bound", "since", "until", "harness", "model", "limit", "bootstrap", "config")
        },
    )
    path = v["db"] or default_db_path()
    found = _older(paths, path) if paths and path != ":memory:" else None
    if paths and found is None:
        return None
    if stored is not None and stored[0] == path and path != ":memory:":
        import json

        ingested = _unchanged(stored[2], found) if found is not None else None
        if paths and ingested is None:
            return None
        return dict(json.loads(stored[1])), fmt, ingested
    con = peek(path) if path != ":memory:" else None
    if con is None:
        return None
    try:
        ingested = _unchanged(con, found) if found is not None else None
        if paths and ingested is None:
            if found is not None:  # (a file with no row, or not its recorded size and mtime)
                _STATS_CHANGED[:] = [path]
            return None
        check_filters(con, opts)
        data = memo.get(con, memo.key(con, opts))
    finally:
        con.close()
    return None if data is None else (data, fmt, ingested)


def _older(paths: list[str], db: str) -> Any:
    """The files the paths name (stallscan.ingest.discover), or None when one is unreadable, there are none,
    or one was modified after the database file (and its write-ahead log) last was: a file written since the
    last ingest cannot have its recorded stats, so the database is not opened for this lookup (a file
    dated in the future only sends its reports to the typer command)."""
    from stallscan.ingest.discover import discover

    found = discover(paths)
    if found.unreadable or not found.files:
        return None  # (the CLI names what it could not read)
    try:
        written = max(os.stat(p).st_mtime_ns for p in (db, f"{db}.wal") if os.path.exists(p))
        if any(os.stat(f).st_mtime_ns > written for f in found.files):
            return None
    except (OSError, ValueError):
        return None
    return found


def _unchanged(con: Any, found: Any) -> IngestResult | None:
    """The no-change ingest's result when every file found (_older) has its recorded size and mtime. con:
    a connection, or the `files` rows' stats already read (stallscan.ingest.plan.STATS_COLUMNS)."""
    from stallscan.ingest.plan import same_stats, stats_match
    from stallscan.ingest.result import IngestResult

    n = stats_match(con, found.files) if isinstance(con, list) else same_stats(con, found.files)
    if n is None:
        return None
    return IngestResult(
        files=n, unchanged=n, searched=found.searched, left_out=found.left_out, left_out_unopened=found.unopened
    )


def _writable(output: str) -> bool:
    """Whether -o names a file that can be written (else the typer command says why not)."""
    folder = os.path.dirname(os.path.abspath(output))
    if os.path.isdir(output) or not os.path.isdir(folder):
        return False
    return os.access(output if os.path.exists(output) else folder, os.W_OK)


# --- the mirror's upkeep (stallscan.report.mirror) ----------------------------------------------------------


def _snapshot(paths: list[str], v: dict[str, Any]) -> tuple[Any, ...]:
    """What a mirror entry is valid for, taken before the memo lookup and again after it."""
    from stallscan.replay.labels import label_inputs
    from stallscan.report import mirror

    over = label_inputs(v["config"])["overrides"]
    labels = mirror.label_files(v["config"], over.rsplit(":", 1)[0] if over else None)
    db = v["db"] or default_db_path()
    walk = mirror.listing(paths) if paths else None
    return (mirror.db_state(db) if db != ":memory:" else None, walk, labels, mirror.code_state(mirror.origins()))


def _remember(
    paths: list[str], v: dict[str, Any], before: tuple[Any, ...], text: str, ingested: Any, docs: dict[str, str]
) -> None:
    """Write the mirror of a memo hit, when nothing it depends on changed during the lookup."""

    def work() -> None:
        from stallscan.report import mirror
        from stallscan.report.registry import names

        state, walk, labels, code = before
        if state is None or (paths and walk is None) or mirror.walked(walk, mirror.path_of(state[0])):
            return  # (a mirror in a folder the walk reads would be one more file in it)
        if _snapshot(paths, v) != before:
            return
        if any(b is not None and len(b) > mirror.MAX_INPUT for b in (labels[2], labels[4])):
            return
        from stallscan.report.emit import plain, stderr_of

        line, note, _ = stderr_of(ingested)
        entry = {
            "key": mirror.entry_key(paths, v),
            "labels": labels,
            "stderr": line,
            "note_text": note,
            "note": plain(f"note: {note}", "dim") if note else None,
            "sections": list(names()),
        }
        mirror.save(state[0], state, entry, walk, text, docs, code=code)

    _quietly(work)


def _mirror_after_command(args: list[str]) -> None:
    """After the typer command printed a report: look it up as a repeat would, and mirror that."""

    def work() -> None:
        import json

        from stallscan.report.mirror import FORMATS

        parsed = parse_report(args)
        if parsed is None:
            return
        paths, v = parsed
        before = _snapshot(paths, v)
        from stallscan.cli.report_cmd import DRAWN, STORED

        stored = STORED[0] if STORED else None
        found = _memo_hit(paths, v, stored)
        if found is None:
            return
        data, fmt, ingested = found
        # what the command stored and drew, when the lookup answered from it: the same text and document
        mine = stored is not None and stored[0] == (v["db"] or default_db_path())
        text = stored[1] if stored is not None and mine else json.dumps(data, default=str)
        docs = {}
        if fmt in FORMATS and mine and fmt in DRAWN:
            docs[fmt] = DRAWN[fmt]
        elif fmt in FORMATS:
            from stallscan.report.output import add_unreadable, document

            add_unreadable(data, [])
            docs[fmt] = str(document(data, fmt))
        _remember(paths, v, before, text, ingested, docs)

    _quietly(work)
