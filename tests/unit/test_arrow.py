"""stallscan.store.arrow: Arrow arrays built from their buffers hold the values given, NULLs where asked."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from stallscan.store import arrow


@pytest.mark.parametrize(
    ("values", "mask", "type", "want"),
    [
        (np.array([3, 1, 2], np.int64), None, None, (pa.int64(), [3, 1, 2])),
        (np.array([7, 8, 9], np.int32), np.array([False, True, False]), None, (pa.int32(), [7, None, 9])),
        (np.array([True, False, True, True, False, False, False, False, True]), None, None,
         (pa.bool_(), [True, False, True, True, False, False, False, False, True])),
        (np.array([1.5, -2.0]), np.array([True, False]), None, (pa.float64(), [None, -2.0])),
        (np.array([4, 5], np.int8), None, pa.int32(), (pa.int32(), [4, 5])),
        (np.empty(0, np.int32), None, None, (pa.int32(), [])),
    ],
)  # fmt: skip
def test_from_numpy(values, mask, type, want):
    a = arrow.from_numpy(values, mask, type)
    a.validate(full=True)
    assert (a.type, a.to_pylist()) == want


@pytest.mark.parametrize(
    ("values", "type", "want"),
    [
        (["a", None, "héllo", ""], None, (pa.string(), ["a", None, "héllo", ""])),
        (["x"], pa.large_string(), (pa.large_string(), ["x"])),
        ([b"l1\n", b""], pa.large_binary(), (pa.large_binary(), [b"l1\n", b""])),
        ([], None, (pa.string(), [])),
    ],
)
def test_strings(values, type, want):
    a = arrow.strings(values, type)
    a.validate(full=True)
    assert (a.type, a.to_pylist()) == want


@pytest.mark.parametrize(
    ("values", "type", "want"),
    [
        ([1, None, 3], pa.int32(), [1, None, 3]),
        ((True, None, False), pa.bool_(), [True, None, False]),
        ([0.5, 2], pa.float64(), [0.5, 2.0]),
        (range(3), pa.int32(), [0, 1, 2]),
        (["p", None], pa.string(), ["p", None]),
        (np.array([6, 7]), pa.int64(), [6, 7]),
    ],
)
def test_column(values, type, want):
    a = arrow.column(values, type)
    assert (a.type, a.to_pylist()) == (type, want)


def test_table_takes_arrays_and_numpy_columns():
    t = arrow.table({"a": np.array([1, 2], np.int64), "b": arrow.strings(["x", "y"])})
    assert t.column_names == ["a", "b"] and t.to_pylist() == [{"a": 1, "b": "x"}, {"a": 2, "b": "y"}]
    s = pa.schema([("a", pa.int64()), ("b", pa.string())])
    assert arrow.table({"a": np.array([5]), "b": arrow.strings([None])}, schema=s).to_pylist() == [{"a": 5, "b": None}]


def test_to_numpy_reads_every_chunk_from_its_offset():
    ints = pa.chunked_array([pa.array([9, 1, 2, 3])[1:3], pa.array([4, 5])])
    assert arrow.to_numpy(ints).tolist() == [1, 2, 4, 5]
    assert arrow.to_numpy(ints, np.float64).dtype == np.float64
    bools = pa.array([True, False, False, True, True, False, True, False, False, True])[3:]
    assert arrow.to_numpy(bools).tolist() == [True, True, False, True, False, False, True]
    assert arrow.to_numpy(pa.chunked_array([], pa.int32())).tolist() == []
    with pytest.raises(ValueError):
        arrow.to_numpy(pa.array([1, None]))
