"""The files of an export: staged beside the target, swapped in whole, described by a manifest written last.

An export of generation G writes every table into `DIR/.stallscan-new-G/<table>/`, removes the old
manifest, moves each old `DIR/<table>/` aside into `DIR/.stallscan-old-G/` and the staged one in its place
(two renames in one folder), writes the new manifest (`_stallscan_layout.json`, to a temporary name, then
renamed over) and only then deletes the old tables. So a table folder never holds files of two exports,
and a manifest always describes exactly the files beside it: while an export runs, or after one was
killed, the folder holds the old manifest with the old files, or no manifest at all. The manifest names
per table its files (relative path, bytes, rows read back from the parquet footer), its rows and
partitioning, the export's generation id and the database's events version; `verify()` checks a folder
against it (`report --from-parquet` does, before reading).

$STALLSCAN_EXPORT_FAILPOINT=<step>:<n> stops an export at a known point, for the kill tests: after the
n-th table is staged (`staged:n`), after the n-th table is swapped in (`swapped:n`) or after the manifest is
written (`manifest:1`). There it writes `failpoint <step>:<n>` to stderr and waits to be killed.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any

from stallscan.store.errors import InputError

FAILPOINT_ENV = "STALLSCAN_EXPORT_FAILPOINT"
NEW = ".stallscan-new-"
OLD = ".stallscan-old-"


def failpoint(step: str, n: int) -> None:
    """Stop here when $STALLSCAN_EXPORT_FAILPOINT names this step and count (tests kill the process)."""
    if os.environ.get(FAILPOINT_ENV) != f"{step}:{n}":
        return
    sys.stderr.write(f"failpoint {step}:{n}\n")
    sys.stderr.flush()
    while True:  # (waits for the test's SIGKILL; never returns)
        time.sleep(3600)


def generation() -> str:
    """A new export's id: UTC time, process id (stale staging folders of a dead process are removed), random."""
    return f"{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}-{os.getpid()}-{os.urandom(3).hex()}"


def clear_leftovers(out: Path) -> list[str]:
    """Remove the staging folders killed exports left behind (of processes no longer running)."""
    removed = []
    for p in out.iterdir() if out.is_dir() else ():
        if not p.is_dir() or not p.name.startswith((NEW, OLD)):
            continue
        try:
            pid = int(p.name.split("-")[-2])
        except (ValueError, IndexError):
            continue
        if pid != os.getpid() and _alive(pid):
            continue  # another export into the same folder is under way: its files are not ours to remove
        shutil.rmtree(p, ignore_errors=True)
        removed.append(p.name)
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def describe(folder: Path) -> dict[str, dict[str, int]]:
    """The parquet files under a table folder: relative path -> bytes and rows (from the footer)."""
    import pyarrow.parquet as pq

    out = {}
    for p in sorted(folder.rglob("*.parquet")):
        out[p.relative_to(folder).as_posix()] = {"bytes": p.stat().st_size, "rows": pq.read_metadata(p).num_rows}
    return out


def swap_in(out: Path, staged: Path, trash: Path, table: str) -> None:
    """Put the staged table folder in place of `out/<table>` (the old one moved into `trash`)."""
    target = out / table
    if target.exists() or target.is_symlink():
        trash.mkdir(exist_ok=True)
        os.rename(target, trash / table)
    os.rename(staged / table, target)


def write_manifest(out: Path, manifest: dict[str, Any], name: str) -> None:
    """Write the manifest whole: to a temporary name, flushed to disk, then renamed over the old one."""
    tmp = out / f".{name}.tmp-{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(json.dumps(manifest, indent=2) + "\n")
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, out / name)
    with contextlib.suppress(OSError):  # the rename itself durable (POSIX; not possible everywhere)
        fd = os.open(out, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def verify(root: Path, manifest: dict[str, Any] | None, tables: list[str]) -> None:
    """Check the export folder `root` against its manifest for `tables`: every file the manifest lists is
    there with its size and rows, no other parquet file is, and the tables come from one events version.
    Raises InputError (exit 3) saying what disagrees."""
    hint = f"re-run the export into {root} (stallscan export {root} --tables ...), or point at a complete one"
    if manifest is None:
        raise InputError(
            f"{root} has table folders but no manifest: an export into it was interrupted or is still running",
            hint=hint,
        )
    listed = manifest.get("tables") or {}
    for table in tables:
        entry = listed.get(table)
        if entry is None:
            raise InputError(f"{root}/{table} is not in the export's manifest", hint=hint)
        if "files" not in entry:
            raise InputError(f"{root}'s manifest lists no files for {table} (written by an older stallscan)", hint=hint)
        try:
            have = describe(root / table)
        except Exception as exc:  # a truncated or damaged parquet file (pyarrow's error names it)
            raise InputError(f"{root}/{table}: a parquet file cannot be read ({exc})", hint=hint) from None
        want = entry["files"]
        extra = sorted(set(have) - set(want))
        missing = sorted(set(want) - set(have))
        changed = sorted(f for f in set(have) & set(want) if have[f] != want[f])
        if extra or missing or changed:
            what = (
                f"{len(extra)} file(s) it does not list (e.g. {extra[0]})"
                if extra
                else f"{len(missing)} listed file(s) missing (e.g. {missing[0]})"
                if missing
                else f"{len(changed)} file(s) of another size or row count (e.g. {changed[0]})"
            )
            raise InputError(f"{root}/{table} disagrees with the export's manifest: {what}", hint=hint)
        rows = sum(f["rows"] for f in have.values())
        if rows != entry.get("rows"):
            raise InputError(f"{root}/{table} holds {rows:,} rows, its manifest says {entry.get('rows')}", hint=hint)
    versions = {listed[t].get("events_version") for t in tables}
    if len(versions) > 1:
        raise InputError(
            f"the tables in {root} were exported from different states of the database "
            f"(events versions {', '.join(str(v) for v in sorted(versions, key=str))})",
            hint=f"export them together: stallscan export {root} --tables {','.join(tables)}",
        )
