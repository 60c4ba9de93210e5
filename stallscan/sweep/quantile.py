"""np.quantile's default (linear) quantile of a 1-D float array, without the import numpy 2 makes in it.

numpy 2's np.quantile and np.percentile call np.unique on the interpolation indices, and np.unique asks
`np.ma.is_masked`, which imports numpy.ma (some 18 CPU ms) the first time: the report after one new session
imported it only for the sweep's and the headline's intervals. `quantile` computes what numpy's
`_quantile` does for method "linear" (virtual index (n - 1) q, the two order statistics around it, numpy's
`_lerp` of them) on a partitioned copy, so the value is the same bit for bit; anything else (another shape or
dtype than 1-D float64, a NaN or an infinity) is handed to np.quantile itself. tests/unit/test_quantile.py compares the two.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np


def quantile(values: Any, q: float) -> float:
    """float(np.quantile(values, q)) for 0 <= q <= 1."""
    a = np.asarray(values)
    if a.ndim != 1 or not len(a) or a.dtype != np.float64 or not 0.0 <= q <= 1.0 or not np.isfinite(a).all():
        return float(np.quantile(a, q))
    n = len(a)
    at = (n - 1) * q  # numpy's virtual index for "linear"
    if at >= n - 1:  # (numpy: the last order statistic, through its _lerp with t = 0 when n > 1, which adds +0.0:
        # a top of -0.0 comes back as 0.0)
        return float(a.max()) if n == 1 else float(a.max() + 0.0)
    lo = math.floor(at)
    below, above = np.partition(a, (lo, lo + 1))[lo : lo + 2]
    t = at - lo
    diff = above - below  # numpy's _lerp: from the nearer end
    return float(above - diff * (1 - t)) if t >= 0.5 else float(below + diff * t)
