"""One policy over one group of the threshold sweep: its cost curve, its recommendation (the plateau's advice) and
what its session bootstrap needs (stallscan.sweep.core runs every policy and group through these)."""

from __future__ import annotations

from typing import Any

import numpy as np

from stallscan.replay.boundaries_ref import GAP_THRESHOLD_S
from stallscan.sweep import bootstrap as boot
from stallscan.sweep import plateau
from stallscan.sweep.bootstrap import Pairs
from stallscan.sweep.cells import CellIndex, Curve, policy_parts, sweep_cells
from stallscan.sweep.quantile import quantile


def labels_ceiling(cells: dict[str, np.ndarray], sel: np.ndarray, group: str) -> dict[str, Any]:
    """The marker-based labels as a policy: the truth itself, so no errors; what it cannot vouch for is
    the events no marker decided (labelled human by default), reported as `by_fallback`."""
    n = cells["n"][sel]
    return {
        "policy": "labels",
        "group": group,
        "threshold": None,
        "cost": 0.0,
        "auto_as_human": 0,
        "human_as_auto": 0,
        "n_events": int(n.sum()),
        "n_gap_decided": 0,
        "by_fallback": int(n[cells["by_fallback"][sel]].sum()),
        "at_2s": None,
        "interval": None,
        "bootstrap": 0,
    }


def sweep_one(
    rows: dict[str, np.ndarray],
    t: np.ndarray,
    policy: str,
    group: str,
    a: float,
    b: float,
    n_boot: int,
    seed: int,
    current: float = GAP_THRESHOLD_S,
) -> tuple[Curve, dict[str, Any]]:
    """One policy over one group: the curve, the recommendation and (n_boot > 0) its bootstrap interval."""
    curve, rec, parts, n_sess, keys = point(rows, t, policy, group, a, b, current)
    if n_boot and n_sess > 1 and len(t):
        set_interval(rec, boot.picks([parts], keys, t, a, b, n_boot, seed, current)[0])
    return curve, rec


def set_interval(rec: dict[str, Any], picked: np.ndarray) -> None:
    rec["interval"] = [quantile(picked, 0.025), quantile(picked, 0.975)]
    rec["bootstrap"] = len(picked)


def point(
    rows: dict[str, np.ndarray],
    t: np.ndarray,
    policy: str,
    group: str,
    a: float,
    b: float,
    current: float = GAP_THRESHOLD_S,
    n_sess: int | None = None,
    index: CellIndex | None = None,
) -> tuple[Curve, dict[str, Any], tuple[Pairs, Pairs, np.ndarray], int, np.ndarray]:
    """The curve and recommendation of one policy, and what its bootstrap needs: the gap-decided
    (session, bin) counts of humans and of automatic events, the fixed (tp, fn, fp, tn) x session counts,
    and each session's key (its cells' `skey`, md5 of the session id; hand-built cells: the index's).
    n_sess: the sessions' count when the cells are summed over sessions (their parts are then one session's).
    index: cell_index of these cells (rows: None)."""
    c = rows if "n" in rows else sweep_cells(rows, t)  # rows of sweep_input.sql, or cells
    w = np.asarray(c["n"], float)
    (gh, go, cells), keys, by_gap = policy_parts(c, policy, len(t) + 1, index)
    n_sess, nb = len(keys) if n_sess is None else n_sess, len(t) + 1
    h = np.bincount(gh[1], gh[2], minlength=nb)
    o = np.bincount(go[1], go[2], minlength=nb)
    tp = np.cumsum(h[::-1])[::-1][1:]  # humans with bin > k, i.e. gap >= t[k]
    fp = np.cumsum(o[::-1])[::-1][1:]
    g = {"tp": tp, "fp": fp, "fn": h.sum() - tp, "tn": o.sum() - fp}
    fixed = dict(zip(("tp", "fn", "fp", "tn"), map(float, cells.sum(axis=1))))
    allp = {k: g[k] + fixed[k] for k in g}
    cost = a * allp["fp"] + b * allp["fn"]
    n_events, n_gap = int(w.sum()), int(w[by_gap].sum())
    curve = Curve(policy, group, t, g, allp, cost, n_gap, n_events)
    best = int(np.argmin(cost)) if len(t) else 0  # a lowest-cost point
    rec: dict[str, Any] = {
        "policy": policy,
        "group": group,
        "threshold": None,
        "cost": float(cost[best]) if len(t) else None,
        "auto_as_human": int(allp["fp"][best]) if len(t) else 0,
        "human_as_auto": int(allp["fn"][best]) if len(t) else 0,
        "n_events": n_events,
        "n_gap_decided": n_gap,
        "at_2s": _point_at(allp, cost, _index(t, GAP_THRESHOLD_S)),
        "at_current": _point_at(allp, cost, _index(t, current)),
        "interval": None,
        "bootstrap": 0,
    }
    if len(t):
        rec.update(plateau.advice(cost, t, current, n_sess, n_gap))
        rec["lowest_cost"] = rec["cost"]
        k = _index(t, rec["threshold"])  # cost and errors at what to set (off the grid: the plateau's)
        if k is not None:
            rec.update(cost=float(cost[k]), auto_as_human=int(allp["fp"][k]), human_as_auto=int(allp["fn"][k]))
    return curve, rec, (gh, go, cells), n_sess, keys


def _index(t: np.ndarray, x: float) -> int | None:
    """The index of `x` in the sorted grid `t`, None when it is not a grid point."""
    k = int(np.searchsorted(t, x))
    return k if len(t) and t[min(k, len(t) - 1)] == x else None


def _point_at(allp: dict[str, np.ndarray], cost: np.ndarray, k: int | None) -> dict[str, Any] | None:
    if k is None:
        return None
    return {"cost": float(cost[k]), "auto_as_human": int(allp["fp"][k]), "human_as_auto": int(allp["fn"][k])}
