"""The few Arrow compute functions stallscan calls, through pyarrow's compiled kernels module.

`import pyarrow.compute` costs about 40 CPU ms: it wraps every one of Arrow's ~290 kernels in a Python function
with a signature and a docstring scraped at import. The kernels themselves live in `pyarrow._compute` (about 4 ms
to import); `call_function(name, args, options)` is what each wrapper ends in. These functions make the same
calls with the options `pyarrow.compute` would pass for the arguments stallscan gives (none, or the ones named
here; `cast` as `Array.cast` makes it), so `from stallscan.store.arrow_compute import compute as pc` answers
`pc.take(...)` as before. tests/unit/test_arrow_compute.py compares each with pyarrow.compute's. `pyarrow._compute`
is not pyarrow's public surface: a pyarrow that moves these names gets them from `pyarrow.compute` (the same
objects, at that module's import cost).
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

try:
    from pyarrow._compute import CastOptions, SetLookupOptions, TakeOptions, call_function
except ImportError:  # (a pyarrow whose compiled module moved: the public names)
    from pyarrow.compute import CastOptions, SetLookupOptions, TakeOptions, call_function


def take(data: Any, indices: Any) -> Any:
    return call_function("take", [data, indices], TakeOptions(boundscheck=True))


def is_in(values: Any, value_set: Any) -> Any:
    return call_function("is_in", [values], SetLookupOptions(value_set=value_set))


def cast(arr: Any, target_type: Any) -> Any:
    """A safe cast, as `Array.cast(target_type)` gives it."""
    return call_function("cast", [arr], CastOptions.safe(target_type))


def _plain(name: str) -> Any:
    def call(*args: Any) -> Any:
        return call_function(name, list(args))

    call.__name__ = name
    return call


# (min, max, any: ScalarAggregateOptions' defaults, skip_nulls and min_count 1, as pyarrow.compute gives them
# without options; dictionary_encode: null_encoding 'mask', its default)
compute = SimpleNamespace(
    take=take,
    cast=cast,
    is_in=is_in,
    **{
        n: _plain(n)
        for n in ("unique", "min", "max", "any", "dictionary_encode", "equal", "not_equal", "binary_length")
    },
)
