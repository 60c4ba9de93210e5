"""A mirror of the report memo beside the database (`<db>.memo`), read without loading DuckDB.

The database stays the source of truth (stallscan.report.memo, table `report_memo`). A repeat report that
the memo answers still pays for importing duckdb and opening the file read-only, more than the rest of the
answer. The mirror holds, for ONE exact state of the database file, what such a memo hit prints, so that
the console script (stallscan.entry) can print it having imported only os, sys and marshal:

  * the database's state: (st_dev, st_ino, st_size, st_mtime_ns, st_ctime_ns) and the raw bytes of its
    first 12 KiB (DuckDB's main header and the two database headers with their checkpoint iteration
    counters), taken with no `<db>.wal` beside it. Anything that writes the file (ingest, derive, the memo's
    own put, `stallscan sql`, another program, a copy put in its place) changes the inode, size, times or a
    header; `os.utime` cannot restore st_ctime, and a checkpoint rewrites a header. The bytes are compared
    as they are (no hash: hashlib's import would cost more than the comparison);
  * the code: the package's own location and every file of it and of queries/, duckdb's, numpy's and
    pyarrow's entry files by path, size, mtime_ns and ctime_ns (what the memo's code stamp and rules hash
    stand for), the module path entry each of those three is found in (so a folder put in front that
    holds another numpy misses), and the interpreter's version. Not the whole module path: `python -m
    stallscan` puts the working directory in front of it, the console script its own folder, and a
    PYTHONPATH adds folders, none of which changes the code a report runs when the package and its
    dependencies are found where they were;
  * per entry (KEEP at most, the newest first), its key: the report options that shape the data, the PATH
    arguments, the working directory, the user, STALLSCAN_CONFIG and HOME; the labels inputs as files (the
    config file the run would read and the override file it names, compared byte for byte); the listing of
    the walk over the PATHs (every file and folder entry with its stat: a new, removed, renamed, touched,
    rewritten, re-permissioned file changes it, and with it what the no-change check finds); the stderr line
    of the no-change ingest and the walk's `note: left out ...`; the report data (JSON text) and the
    document each format printed (json, markdown, html), filled in as formats are asked for.

Hit: all of the above equal -> the stored document and stderr lines are printed exactly as the memo hit
prints them (tests/test_report_memo.py compares the two byte for byte). Anything else, or any doubt (a glob
PATH, an unreadable folder, a mirror that cannot be read or parsed): no hit, and the usual path runs. The
mirror is written (temporary file, then rename) only by a process that just computed or served the report,
once the database is closed, and only when the database's state and the walk's listing were the same before
the memo lookup and after it; a folder that cannot be written gets no mirror and no error.

The file: MAGIC (with the interpreter's marshal version), an 8-byte header length, the header (marshal: the
states above and each entry's blob offsets), then the blobs (listings in marshal, texts in UTF-8), so a hit
reads the header and only the blobs it needs.
"""

from __future__ import annotations

import marshal
import os
import stat
import sys

TYPE_CHECKING = False  # (typing is not imported: the hit path imports os, sys and marshal only)
if TYPE_CHECKING:
    from typing import Any

MAGIC = b"stallscan-memo-mirror 2 py%d.%d m%d\n" % (*sys.version_info[:2], marshal.version)
SUFFIX = ".memo"
HEAD_BYTES = 12 * 1024  # DuckDB: main header + the two database headers
KEEP = 8  # entries kept (one per option set and PATH set asked for; the formats share one)
MAX_INPUT = 8 << 20  # a config or override file larger than this: no mirror (it is compared byte for byte)
FORMATS = ("json", "markdown", "html")  # the documents stored; the terminal report is drawn from the data
# the report options the data depends on (`db`: the `show` commands printed name it)
KEYED = ("db", "threshold", "retry_bound", "since", "until", "harness", "model", "limit", "bootstrap", "config")
PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIBS = ("duckdb", "numpy", "pyarrow")  # the dependencies whose files the code state records


def path_of(db: str) -> str:
    return os.path.abspath(db) + SUFFIX


def db_state(db: str) -> tuple[Any, ...] | None:
    """The database file's identity and header bytes, or None (missing, not a file, a WAL beside it)."""
    try:
        st = os.stat(db)
        if not stat.S_ISREG(st.st_mode) or os.path.lexists(db + ".wal"):
            return None
        with open(db, "rb", buffering=0) as fh:
            head = fh.read(HEAD_BYTES)
    except OSError:
        return None
    return (os.path.abspath(db), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns, head)


def _fp(st: os.stat_result) -> tuple[int, ...]:
    return (st.st_mode, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev, st.st_uid, st.st_gid)


def listing(paths: list[str]) -> list[Any] | None:
    """What the walk over PATHs depends on (stallscan.ingest.discover: os.walk without following links,
    the names, the files' stats and what a sniff reads), or None when it cannot be taken (a glob, a path that
    is not a file or folder, a folder that cannot be read). Equal listings: the walk finds the same files."""
    out: list[Any] = []
    for raw in paths:
        p = os.path.expanduser(raw)
        try:
            st = os.stat(p)
        except OSError:
            return None
        if stat.S_ISREG(st.st_mode):
            out.append((p, _fp(st)))
        elif stat.S_ISDIR(st.st_mode):
            out.append((p, ("dir",)))
            if not _walk(p, out):
                return None
        else:
            return None
    return out


def _walk(root: str, out: list[Any]) -> bool:
    todo = [root]
    while todo:
        folder = todo.pop()
        rows: list[tuple[str, Any]] = []
        try:
            with os.scandir(folder) as it:
                for e in it:
                    try:
                        is_dir = e.is_dir()
                    except OSError:
                        is_dir = False
                    if is_dir:
                        link = e.is_symlink()  # (listed, not walked: os.walk's followlinks=False)
                        rows.append((e.name, "link" if link else "dir"))
                        if not link:
                            todo.append(e.path)
                        continue
                    try:
                        rows.append((e.name, _fp(e.stat())))
                    except OSError:
                        rows.append((e.name, "gone"))  # a broken link
        except OSError:
            return False
        rows.sort()
        out.append((folder, rows))
    return True


def origins() -> list[str]:
    """Where duckdb, numpy and pyarrow are installed (found without importing them; the writer's part)."""
    import importlib.util

    found = []
    for mod in LIBS:
        spec = importlib.util.find_spec(mod)
        found.append(str(spec.origin) if spec and spec.origin else "-")
    return found


def walked(walk: list[Any] | None, path: str) -> bool:
    """Whether `path` lies in a folder the walk lists (a mirror there would be a file the walk finds)."""
    folder = os.path.realpath(os.path.dirname(os.path.abspath(path)))
    return any(isinstance(x[1], list) and os.path.realpath(x[0]) == folder for x in walk or [])


def found_in(mods: tuple[str, ...] = LIBS) -> list[str]:
    """The module path entry each top-level module in `mods` is imported from (the first that holds a package
    folder with an __init__ or a module file of the name: what the path finder looks for, by stats only, no
    importlib), "-" when none does."""
    import _imp  # (built in: the extension suffixes of this interpreter)

    suffixes = (".py", ".pyc", *_imp.extension_suffixes())
    out = []
    for mod in mods:
        where = "-"
        for entry in sys.path:
            folder = os.path.abspath(entry or os.curdir)
            base = os.path.join(folder, mod)
            if os.path.isfile(os.path.join(base, "__init__.py")) or any(os.path.isfile(base + s) for s in suffixes):
                where = folder
                break
        out.append(where)
    return out


def code_state(libs: list[str]) -> list[Any]:
    """The running code: the interpreter's version, the package's location and its and queries/'s files, the
    files `libs` (origins()) by stat and the module path entries duckdb, numpy and pyarrow are found in
    (found_in; not the module path itself, which differs between the console script and `python -m`)."""
    out: list[Any] = [sys.version, PACKAGE, list(libs), found_in()]
    queries = os.path.join(PACKAGE, "queries")  # (stallscan.store.sql.queries_dir: in the wheel, else beside)
    bases = [PACKAGE] + ([] if os.path.isdir(queries) else [os.path.join(os.path.dirname(PACKAGE), "queries")])
    for base in bases:
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
            for name in sorted(filenames):
                p = os.path.join(dirpath, name)
                try:
                    st = os.stat(p)
                except OSError:
                    out.append((p, None))
                    continue
                out.append((p, st.st_size, st.st_mtime_ns, st.st_ctime_ns))
    for p in libs:
        try:
            st = os.stat(p)
            out.append((p, st.st_size, st.st_mtime_ns, st.st_ctime_ns))
        except OSError:
            out.append((p, None))
    return out


def entry_key(paths: list[str], v: dict[str, Any]) -> tuple[Any, ...]:
    """What the entry is for: the options that shape the data, the PATHs and where they are read from."""
    opts = tuple((k, tuple(v[k]) if isinstance(v[k], list) else v[k]) for k in KEYED)
    env = tuple(os.environ.get(k) for k in ("STALLSCAN_CONFIG", "HOME"))
    user = getattr(os, "geteuid", int)(), getattr(os, "getegid", int)()  # (os.access answers for this user)
    return (tuple(paths), opts, os.getcwd(), user, env)


def config_path(config: str | None) -> str | None:
    """The config file a run reads (stallscan.replay.labels.load_config: --config, $STALLSCAN_CONFIG, else
    ./stallscan.toml when there is one)."""
    if config is not None:
        return config
    return os.environ.get("STALLSCAN_CONFIG") or ("stallscan.toml" if os.path.isfile("stallscan.toml") else None)


def _read(path: str | None) -> bytes | None:
    if path is None:
        return None
    try:
        with open(path, "rb") as fh:
            return fh.read(MAX_INPUT + 1)
    except OSError:
        return None


def label_files(config: str | None, overrides: str | None) -> tuple[Any, ...]:
    """The labels inputs as files: the config (path, real path, bytes) and the override file (path, bytes)."""
    cfg = config_path(config)
    return (cfg, os.path.realpath(cfg) if cfg else None, _read(cfg), overrides, _read(overrides))


# --- reading ------------------------------------------------------------------------------------------------


class Mirror:
    """A valid mirror file: its header, and its blobs read when asked for."""

    def __init__(self, header: dict[str, Any], fd: int, base: int) -> None:
        self.header = header
        self._fd = fd
        self._base = base

    def __del__(self) -> None:
        os.close(self._fd)

    def raw(self, span: tuple[int, int]) -> bytes:
        b = os.pread(self._fd, span[1], self._base + span[0])
        if len(b) != span[1]:
            raise EOFError("the mirror file is shorter than its header says")
        return b

    def text(self, span: tuple[int, int]) -> str:
        return self.raw(span).decode("utf-8")

    def obj(self, span: tuple[int, int]) -> Any:
        return marshal.loads(self.raw(span))


def load(db: str) -> Mirror | None:
    """The mirror of `db` when it is valid for the database as it is now, else None (always where the os
    has no pread)."""
    if not hasattr(os, "pread"):
        return None
    try:
        fd = os.open(path_of(db), os.O_RDONLY)
    except OSError:
        return None
    try:
        n = len(MAGIC)
        head = os.pread(fd, 1 << 16, 0)
        size = int.from_bytes(head[n : n + 8], "little") if head[:n] == MAGIC and len(head) >= n + 8 else -1
        if n + 8 + size > os.fstat(fd).st_size:
            size = -1  # (cut short, or no length at all)
        elif size > len(head) - n - 8:
            head = os.pread(fd, n + 8 + size, 0)
        header: Any = marshal.loads(head[n + 8 : n + 8 + size]) if size >= 0 else None
        valid = isinstance(header, dict) and header["db"] is not None and header["db"] == db_state(db)
        if valid and header["code"] == code_state(header["code"][2]):
            return Mirror(header, fd, n + 8 + size)
    except (OSError, EOFError, ValueError, TypeError, KeyError, IndexError):
        valid = False
    os.close(fd)
    return None


def find(m: Mirror, paths: list[str], v: dict[str, Any]) -> dict[str, Any] | None:
    """The entry for these PATHs and options whose inputs are as recorded, else None."""
    key = entry_key(paths, v)
    for e in m.header.get("entries", []):
        if e["key"] != key:
            continue
        if e["labels"] != label_files(v["config"], e["labels"][3]):
            return None
        if paths and m.obj(e["walk"]) != listing(paths):
            return None
        return dict(e)
    return None


# --- writing ------------------------------------------------------------------------------------------------


def save(
    db: str,
    state: tuple[Any, ...],
    entry: dict[str, Any],
    walk: list[Any] | None,
    data: str,
    docs: dict[str, str],
    old: Mirror | None = None,
    code: list[Any] | None = None,
) -> None:
    """Write the mirror (temporary file, then rename): this entry first, then the others still valid for
    `state` (from `old`, else the file as it is), KEEP at most. Any failure leaves no mirror change."""
    prior = old if old is not None and old.header["db"] == state else _same_state(db, state)
    entries: list[tuple[dict[str, Any], dict[str, Any]]] = []  # (entry, its blobs by name)
    entries.append((entry, {"walk": marshal.dumps(walk), "data": data.encode(), **_encoded(docs)}))
    for e in (prior.header["entries"] if prior else [])[: KEEP - 1]:
        if e["key"] != entry["key"] and prior is not None:
            entries.append((e, {k: prior.raw(s) for k, s in e["spans"].items()}))
    parts: list[bytes] = []
    offset = 0
    out = []
    for e, blobs in entries:
        spans = {}
        for name, b in blobs.items():
            spans[name] = (offset, len(b))
            parts.append(b)
            offset += len(b)
        out.append({**e, "spans": spans, "walk": spans["walk"], "data": spans["data"]})
    code = code if code is not None else code_state(origins())
    header = marshal.dumps({"db": state, "code": code, "entries": out})
    target = path_of(db)
    tmp = f"{target}.{os.getpid()}.tmp"
    try:
        with open(tmp, "wb") as fh:
            fh.write(MAGIC + len(header).to_bytes(8, "little") + header)
            for b in parts:
                fh.write(b)
        os.replace(tmp, target)
    except OSError:
        import contextlib

        with contextlib.suppress(OSError):
            os.unlink(tmp)


def _encoded(docs: dict[str, str]) -> dict[str, bytes]:
    return {f"doc:{fmt}": text.encode() for fmt, text in docs.items() if fmt in FORMATS}


def _same_state(db: str, state: tuple[Any, ...]) -> Mirror | None:
    m = load(db)
    return m if m is not None and m.header["db"] == state else None
