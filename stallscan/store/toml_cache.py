"""Read a TOML data file through a JSON copy kept in a cache directory (pure standard library).

The live guard starts a fresh process at every turn end; importing tomllib and parsing the rule libraries
costs more than the rest of its work. `read(path)` returns the parsed document; the first read of a file
version writes `<cache>/<name>-<hash>.json` (a checksum of the absolute path, the mtime and the size), later reads load
that with `json`. The cache is $STALLSCAN_CACHE, else $XDG_CACHE_HOME/stallscan, else ~/.cache/stallscan;
an unwritable cache only means parsing every time. The TOML file stays the one source.
"""

from __future__ import annotations

import json
import os
import zlib
from typing import Any


def cache_dir() -> str:
    """Where stallscan keeps its JSON copies (also stallscan.store.schema_check's kept columns)."""
    env = os.environ.get("STALLSCAN_CACHE")
    if env:
        return env
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "stallscan")


def read(path: str | os.PathLike[str]) -> dict[str, Any]:
    path = os.path.abspath(os.fspath(path))
    st = os.stat(path)
    key = f"{zlib.crc32(path.encode()):08x}-{st.st_mtime_ns:x}-{st.st_size:x}"
    cached = os.path.join(cache_dir(), f"{os.path.basename(path)}-{key}.json")
    try:
        with open(cached, encoding="utf-8") as fh:
            cached_doc: dict[str, Any] = json.load(fh)
        return cached_doc
    except (OSError, ValueError):
        pass
    import tomllib

    with open(path, "rb") as fh:
        doc = tomllib.load(fh)
    try:
        os.makedirs(os.path.dirname(cached), exist_ok=True)
        tmp = f"{cached}.{os.getpid()}.tmp"
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump(doc, fh, ensure_ascii=False)
        os.replace(tmp, cached)
    except (OSError, TypeError, ValueError):  # TypeError: a TOML date has no JSON form (none in our files)
        pass
    return doc
