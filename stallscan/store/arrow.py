"""Arrow arrays to and from numpy and Python lists without pyarrow's pandas shim.

`pa.array`, `pa.table` from a list or numpy array, `Array.to_numpy` and `pa.scalar` ask pyarrow's pandas
shim whether the object is a pandas one, which imports pandas (about 0.6 s of CPU here, more than the rest
of a one-session report). These build the same arrays from their buffers (`pa.Array.from_buffers`) and read
them back with `np.frombuffer`, so a command that never touches pandas never imports it
(tests/functional/test_no_pandas.py holds the report's path to that).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa

_NUMPY = {
    pa.int8(): np.int8,
    pa.int16(): np.int16,
    pa.int32(): np.int32,
    pa.int64(): np.int64,
    pa.uint8(): np.uint8,
    pa.uint16(): np.uint16,
    pa.uint32(): np.uint32,
    pa.uint64(): np.uint64,
    pa.float32(): np.float32,
    pa.float64(): np.float64,
}
_ARROW = {np.dtype(v): k for k, v in _NUMPY.items()}


def _validity(valid: npt.NDArray[np.bool_] | None) -> tuple[pa.Buffer | None, int]:
    """The validity bitmap (None: no nulls) and the null count of a mask of valid slots."""
    if valid is None:
        return None, 0
    nulls = int(len(valid) - np.count_nonzero(valid))
    return (pa.py_buffer(np.packbits(valid, bitorder="little")) if nulls else None), nulls


def from_numpy(
    values: npt.ArrayLike, mask: npt.NDArray[np.bool_] | None = None, type: pa.DataType | None = None
) -> pa.Array:
    """A numeric or boolean numpy array as an Arrow array (mask: True where NULL), cast to `type` if given."""
    arr = np.ascontiguousarray(values)
    if arr.dtype != np.bool_ and arr.dtype not in _ARROW:  # (dates, objects: pyarrow's own conversion)
        return pa.array(arr, mask=mask, type=type)
    if arr.dtype == np.bool_:
        data, typ = pa.py_buffer(np.packbits(arr, bitorder="little")), pa.bool_()
    else:
        typ = _ARROW[arr.dtype]
        data = pa.py_buffer(arr)
    validity, nulls = _validity(None if mask is None else ~np.asarray(mask, np.bool_))
    out = pa.Array.from_buffers(typ, len(arr), [validity, data], null_count=nulls)
    if type is None or type == typ:
        return out
    from stallscan.store.arrow_compute import compute as pc  # (Array.cast imports pyarrow.compute: 40 ms)

    return pc.cast(out, type)


def strings(values: Sequence[str | bytes | None], type: pa.DataType | None = None) -> pa.Array:
    """A list of str (or bytes, for a binary type) and None as a string (or binary) array."""
    typ = pa.string() if type is None else type
    large = typ in (pa.large_string(), pa.large_binary())
    enc = [b"" if v is None else v if isinstance(v, bytes) else v.encode() for v in values]
    n = len(enc)
    offsets = np.zeros(n + 1, np.int64 if large else np.int32)
    np.cumsum(np.fromiter(map(len, enc), np.int64, n), out=offsets[1:])
    validity, nulls = _validity(np.fromiter((v is not None for v in values), np.bool_, n))
    return pa.Array.from_buffers(
        typ, n, [validity, pa.py_buffer(offsets), pa.py_buffer(b"".join(enc))], null_count=nulls
    )


def column(values: Sequence[Any] | npt.NDArray[Any], type: pa.DataType) -> pa.Array:
    """Python values (None: NULL) or a numpy array as an Arrow array of `type` (string, binary, bool or
    a number)."""
    if type in (pa.string(), pa.large_string(), pa.binary(), pa.large_binary()):
        return strings(list(values), type)
    if isinstance(values, np.ndarray) and values.dtype != object:
        return from_numpy(values, type=type)
    mask = np.fromiter((v is None for v in values), np.bool_, len(values))
    np_type = np.bool_ if pa.types.is_boolean(type) else _NUMPY[type]
    filled: npt.NDArray[Any] = np.fromiter((0 if v is None else v for v in values), np_type, len(values))
    return from_numpy(filled, mask if mask.any() else None, type)


def table(columns: Mapping[str, Any], schema: pa.Schema | None = None) -> pa.Table:
    """A table of Arrow arrays and numeric / boolean numpy arrays (pa.table(dict) would ask the pandas shim)."""
    arrays = [from_numpy(v) if isinstance(v, np.ndarray) else v for v in columns.values()]
    if schema is not None:
        return pa.Table.from_arrays(arrays, schema=schema)
    return pa.Table.from_arrays(arrays, names=list(columns))


def to_numpy(col: pa.ChunkedArray | pa.Array, dtype: Any = None) -> npt.NDArray[Any]:
    """A numeric or boolean column without nulls as numpy (a copy when it has several chunks), as `dtype`."""
    if col.null_count:
        raise ValueError("to_numpy: the column holds NULL")
    chunks = col.chunks if isinstance(col, pa.ChunkedArray) else [col]
    typ = col.type
    if not pa.types.is_boolean(typ) and typ not in _NUMPY:  # (dates: pyarrow's own conversion)
        arr = col.to_numpy() if isinstance(col, pa.ChunkedArray) else col.to_numpy(zero_copy_only=False)
        return np.asarray(arr, dtype=dtype)
    parts = []
    for c in chunks:
        buf = c.buffers()[1]
        if pa.types.is_boolean(typ):
            bits = np.unpackbits(np.frombuffer(buf, np.uint8), bitorder="little") if buf is not None else np.empty(0)
            parts.append(bits[c.offset : c.offset + len(c)].view(np.bool_))  # (0 / 1 bytes: a view, not a copy)
        else:
            np_type = _NUMPY[typ]
            parts.append(np.frombuffer(buf, np_type)[c.offset : c.offset + len(c)] if len(c) else np.empty(0, np_type))
    if not parts:
        empty_type = np.bool_ if pa.types.is_boolean(typ) else _NUMPY[typ]
        out: npt.NDArray[Any] = np.empty(0, empty_type)
    else:
        out = parts[0] if len(parts) == 1 else np.concatenate(parts)
    return out if dtype is None else np.asarray(out, dtype=dtype)


def objects(col: pa.ChunkedArray | pa.Array) -> npt.NDArray[Any]:
    """A string column without nulls as a numpy object array of str, as `fetchnumpy` gives it: each distinct
    string made a Python object once and the rows pointed at it (dictionary-encoded, then a take), not one
    object per row (at 1.25M rows of a few distinct values, 0.03 against 0.3 s)."""
    from stallscan.store.arrow_compute import compute as pc

    if col.null_count:
        raise ValueError("objects: the column holds NULL")
    chunks = col.chunks if isinstance(col, pa.ChunkedArray) else [col]
    if not chunks:
        return np.empty(0, dtype=object)
    enc = pc.dictionary_encode(pa.chunked_array(chunks, col.type)).combine_chunks()
    words = np.empty(len(enc.dictionary), dtype=object)
    words[:] = enc.dictionary.to_pylist()
    out: npt.NDArray[Any] = words[to_numpy(enc.indices, np.intp)]
    return out


def numpy_columns(tbl: pa.Table) -> dict[str, npt.NDArray[Any]]:
    """Every column of a table without nulls as numpy (strings: objects()), keyed by name, in order."""
    return {
        name: objects(col) if pa.types.is_string(col.type) or pa.types.is_large_string(col.type) else to_numpy(col)
        for name, col in zip(tbl.column_names, tbl.columns)
    }
