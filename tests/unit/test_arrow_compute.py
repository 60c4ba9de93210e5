"""stallscan.store.arrow_compute: each function gives what pyarrow.compute's gives for the same arguments."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as real

from stallscan.store.arrow_compute import compute as pc


def test_each_function_equals_pyarrow_compute() -> None:
    s = pa.chunked_array([["a", "b", None], ["b", "c", "a"]])
    n = pa.array([3, 1, None, 3, 7], pa.int64())
    idx = pa.array([4, 0, 2], pa.int64())
    assert pc.take(n, idx).equals(real.take(n, idx))
    assert pc.take(s, pa.array([5, 2, 0])).equals(real.take(s, pa.array([5, 2, 0])))
    t = pa.table({"s": s, "n": pa.chunked_array([n.slice(0, 3), n.slice(2)])})
    assert pc.take(t, pa.array([5, 0, 3])).equals(real.take(t, pa.array([5, 0, 3])))
    assert pc.unique(s).equals(real.unique(s))
    assert pc.is_in(s, value_set=pa.array(["a", "c"])).equals(real.is_in(s, value_set=pa.array(["a", "c"])))
    for f in ("min", "max"):
        assert getattr(pc, f)(n).equals(getattr(real, f)(n))
        assert getattr(pc, f)(pa.array([], pa.int64())).equals(getattr(real, f)(pa.array([], pa.int64())))
    b = pa.array([False, None, True])
    assert pc.any(b).equals(real.any(b))
    assert pc.any(pa.array([False, None])).equals(real.any(pa.array([False, None])))
    assert pc.dictionary_encode(s).equals(real.dictionary_encode(s))
    assert pc.equal(n, n).equals(real.equal(n, n))
    assert pc.not_equal(s.chunk(0), s.chunk(1)).equals(real.not_equal(s.chunk(0), s.chunk(1)))
    ts = pa.array([0, None, 1_700_000_000_000_000], pa.int64())
    assert pc.cast(ts, pa.timestamp("us", "UTC")).equals(ts.cast(pa.timestamp("us", "UTC")))
    raw = pa.array([b"ab", None, b""], pa.binary())
    assert pc.binary_length(raw).equals(real.binary_length(raw))


def test_a_pyarrow_without_the_compiled_module_falls_back_to_the_public_one(monkeypatch) -> None:
    """Were `pyarrow._compute` gone (it is not pyarrow's public surface), the module imports its names from
    `pyarrow.compute` and answers the same."""
    import importlib
    import sys

    import stallscan.store.arrow_compute as mod

    monkeypatch.setitem(sys.modules, "pyarrow._compute", None)  # (an import of it raises ImportError)
    try:
        fallback = importlib.reload(mod)
        assert fallback.call_function is real.call_function
        n = pa.array([3, 1, None, 3, 7], pa.int64())
        assert fallback.compute.take(n, pa.array([4, 0])).equals(real.take(n, pa.array([4, 0])))
    finally:
        monkeypatch.undo()
        importlib.reload(mod)
