"""Reprint an unchanged report without recomputing it (`stallscan report ... --format json|markdown|html`).

The report document is a derived artifact: a pure function of the transcripts it ingests, the database,
the command line, the user's config (and labels-override file), the code and rule libraries, and a few
environment variables. A run whose output went to stdout in a non-terminal format stores its document
under a fingerprint of all of those; a later run with the same fingerprint prints it straight away, from
`stallscan.run()`, before typer, rich, numpy or duckdb are imported (importing duckdb alone costs about
as much as the whole reprint). Any change (a byte appended to a log, a new file in a tree, an ingest or
derive run that wrote the database, another option, an edited stallscan.toml, another stallscan build) gives
another fingerprint, so the normal path runs. Nothing here reads the database: no duckdb.

The fingerprint (sha256) covers:
  * the report arguments exactly as typed (so every option; the entry is stored only when this module's
    reading of the arguments found the same PATHs and --db as the command itself), and the working directory;
  * each discovered input file's path, size, mtime_ns, inode and ctime_ns, and the unreadable ones, taken
    *before* the run's ingest (a file that changes while the report runs makes the next run miss);
    ingest itself skips a file whose size and mtime are unchanged, so an unchanged fingerprint means the
    normal path would ingest nothing;
  * the database file and its WAL: size, mtime_ns, inode and ctime_ns, taken *after* the run closed it;
  * the config file ($STALLSCAN_CONFIG, else ./stallscan.toml) and its labels-override file, by content;
  * the code: every file of the package (stallscan/**, rule libraries in stallscan/data) and queries/ by
    path, size, mtime_ns and inode (what Python's own bytecode cache trusts); the Python version; duckdb's,
    numpy's and pyarrow's installed files;
  * the environment variables stallscan or its output can depend on (STALLSCAN_*, HOME, TZ, LANG, LC_*).
Nothing in the report is relative to the current time (no `now()`, no "last N days").

Every normal run writes the database (its derivation stamps count reuses), so an entry stays valid only
until the next run that computes: in practice the newest entry is the one served.
Entries live next to the database, in `<db>.report-cache/` (a directory of a few files, the newest
KEEP kept): reading them must not need duckdb, and deleting them is always safe. One narrow race is not
covered: another process writing the database between this run closing it and stamping the entry.
STALLSCAN_REPORT_CACHE=0 turns the cache off (neither read nor written).
"""

from __future__ import annotations

import hashlib
import os
import sys

from stallscan.ingest.suffixes import SNIFF_BYTES, SNIFF_SUFFIXES, WALK_SUFFIXES

ENV_OFF = "STALLSCAN_REPORT_CACHE"
KEEP = 8  # entries kept per database (newest first)
SUFFIX = ".report-cache"
ENV_KEYS = ("HOME", "TZ", "LANG", "LANGUAGE")
VALUE_OPTS = frozenset(
    ("--db", "--format", "--bootstrap", "--threshold", "--retry-bound", "--since", "--until")
    + ("--harness", "--model", "--limit", "--section")
)
FLAG_OPTS = frozenset(("--json", "--full"))
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the stallscan package

ARGV: list[str] | None = None  # the report arguments as typed, set by stallscan.run() before the CLI runs


class Request:
    """The report arguments this module understands: PATHs and --db (None: arguments it cannot read)."""

    def __init__(self, argv: list[str], paths: list[str], db: str) -> None:
        self.argv, self.paths, self.db = argv, paths, db


def parse(argv: list[str]) -> Request | None:
    """PATHs and the database of `stallscan report ARGV`, or None for anything not read here (-o, --help,
    --from-parquet, `--opt=value`, unknown options): such runs are neither served nor stored."""
    paths: list[str] = []
    db: str | None = None
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in FLAG_OPTS:
            i += 1
        elif a in VALUE_OPTS:
            if i + 1 >= len(argv) or argv[i + 1].startswith("-"):
                return None
            if a == "--db":
                db = argv[i + 1]
            i += 2
        elif a.startswith("-"):
            return None
        else:
            paths.append(a)
            i += 1
    db = db or os.environ.get("STALLSCAN_DB") or "stallscan.duckdb"
    if db == ":memory:":
        return None
    return Request(list(argv), paths, db)


def enabled() -> bool:
    return os.environ.get(ENV_OFF, "1") != "0"


def _stat(p: str) -> str:
    try:
        st = os.stat(p)
    except OSError:
        return "-"
    return f"{st.st_size}:{st.st_mtime_ns}:{st.st_ino}:{st.st_ctime_ns}"


def _code_hash() -> str:
    """The package's files (code, rule libraries, SQL) by path, size, mtime_ns and inode (what Python's
    bytecode cache trusts), the Python version, and duckdb's, numpy's and pyarrow's installed files."""
    h = hashlib.sha256(sys.version.encode())
    queries = os.path.join(ROOT, "queries")
    if not os.path.isdir(queries):
        queries = os.path.join(os.path.dirname(ROOT), "queries")
    for base in (ROOT, queries):
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
            for name in sorted(filenames):
                p = os.path.join(dirpath, name)
                h.update(f"{p}|{_stat(p)}\0".encode())
    import importlib.util

    for mod in ("duckdb", "numpy", "pyarrow"):  # their installed files, found without importing them
        spec = importlib.util.find_spec(mod)
        origin = spec.origin if spec else None
        h.update(f"{mod}={origin}:{_stat(origin) if origin else '-'}\0".encode())
    return h.hexdigest()


def _config_state() -> str:
    env = os.environ.get("STALLSCAN_CONFIG")
    path = os.path.abspath(env or "stallscan.toml")
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError:
        return f"config={path}:none"
    out = f"config={path}:{hashlib.sha256(data).hexdigest()}"
    import tomllib

    try:
        overrides = (tomllib.loads(data.decode("utf-8")).get("labels") or {}).get("overrides")
    except (tomllib.TOMLDecodeError, UnicodeDecodeError):
        return out + ":invalid"
    if overrides:
        p = os.path.join(os.path.dirname(os.path.realpath(path)), str(overrides))
        try:
            with open(p, "rb") as fh:
                out += f";overrides={p}:{hashlib.sha256(fh.read()).hexdigest()}"
        except OSError:
            out += f";overrides={p}:unreadable"
    return out


def inputs_state(req: Request) -> str | None:
    """Everything the fingerprint covers except the database (see the module docstring); None when the
    inputs cannot be read here (a missing PATH: the normal path reports it)."""
    files = _inputs(req.paths)
    if files is None:
        return None
    h = hashlib.sha256()
    h.update(b"\0".join(a.encode() for a in req.argv) + b"\1")
    h.update(os.getcwd().encode() + b"\1")
    for k in sorted(os.environ):
        if k.startswith(("STALLSCAN_", "LC_")) or k in ENV_KEYS:
            h.update(f"{k}={os.environ[k]}\0".encode())
    h.update(_config_state().encode() + b"\1")
    h.update(_code_hash().encode() + b"\1")
    for f in files:
        h.update(f"{f}|{_stat(f)}\0".encode())
    return h.hexdigest()


def _inputs(paths: list[str]) -> list[str] | None:
    """Every file ingest would read for these PATHs (stallscan.ingest.discover's rules: a file as given, a
    directory walked for WALK_SUFFIXES without following links, a glob), or None when one is missing."""
    out: list[str] = []
    for raw in paths:
        p = os.path.expanduser(raw)
        if os.path.isfile(p):
            out.append(os.path.abspath(p))
        elif os.path.isdir(p):
            out += _walk(p)
        elif any(ch in raw for ch in "*?["):
            import glob

            matches = sorted(glob.glob(p, recursive=True))
            if not matches:
                return None
            for m in matches:
                out += [os.path.abspath(m)] if os.path.isfile(m) else _walk(m) if os.path.isdir(m) else []
        else:
            return None
    return out


def _walk(root: str) -> list[str]:
    out = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames.sort()
        for name in sorted(filenames):
            lname = name.lower()
            if lname.endswith(WALK_SUFFIXES) or (lname.endswith(SNIFF_SUFFIXES) and _sniffed(dirpath, name)):
                full = os.path.join(dirpath, name)
                if os.path.isfile(full):
                    out.append(os.path.abspath(full))
    return out


def _sniffed(dirpath: str, name: str) -> bool:
    """A .log / .txt file ingest's walk takes (its first bytes hold transcript records): the same test."""
    from stallscan.ingest.detect import holds_records

    return holds_records(os.path.join(dirpath, name), SNIFF_BYTES)


def _db_state(db: str) -> str | None:
    if not os.path.isfile(db):
        return None
    return f"{os.path.abspath(db)}|{_stat(db)}|{_stat(db + '.wal')}"


def _key(inputs: str, db: str) -> str | None:
    state = _db_state(db)
    return None if state is None else hashlib.sha256(f"{inputs}\0{state}".encode()).hexdigest()[:32]


def _folder(db: str) -> str:
    return os.path.abspath(db) + SUFFIX


def serve(argv: list[str]) -> bool:
    """Print the stored document of an identical earlier run and return True; False: run normally."""
    if not enabled():
        return False
    req = parse(argv)
    if req is None:
        return False
    inputs = inputs_state(req)
    key = _key(inputs, req.db) if inputs else None
    if key is None:
        return False
    try:
        with open(os.path.join(_folder(req.db), key), "rb") as fh:
            body = fh.read()
    except OSError:
        return False
    sys.stdout.write(body.decode("utf-8"))  # as the normal path writes it (the stored text is UTF-8)
    sys.stdout.flush()
    sys.stderr.write(
        "report: inputs, database and options unchanged since an identical report; printed it again "
        f"({ENV_OFF}=0 recomputes)\n"
    )
    return True


def prepare(paths: list[str], db: str) -> str | None:
    """Before the run: the inputs' fingerprint, when this run's document may be stored (the arguments as
    stallscan.run() saw them read the same PATHs and --db the command parsed)."""
    if ARGV is None or not enabled():
        return None
    req = parse(ARGV)
    if req is None or req.paths != list(paths) or req.db != db:
        return None
    return inputs_state(req)


def remember(inputs: str | None, db: str, text: str) -> None:
    """After the run (database closed): store `text` under the fingerprint. Never fails the command."""
    if inputs is None:
        return
    key = _key(inputs, db)
    if key is None:
        return
    folder = _folder(db)
    try:
        os.makedirs(folder, exist_ok=True)
        tmp = os.path.join(folder, f".tmp-{os.getpid()}")
        with open(tmp, "wb") as fh:
            fh.write(text.encode("utf-8"))
        os.replace(tmp, os.path.join(folder, key))  # readers see a whole entry or none
        entries = sorted(
            (e for e in os.scandir(folder) if not e.name.startswith(".")), key=lambda e: e.stat().st_mtime_ns
        )
        for old in entries[:-KEEP]:
            os.unlink(old.path)
    except OSError:
        return
