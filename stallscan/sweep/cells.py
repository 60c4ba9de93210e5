"""The sweep's data model and its cells: the policies, `SweepResult`, the threshold grid, sweep_input.sql rows
binned into cells, and how a policy splits them into gap-decided and fixed decisions. Read by the sweep
(core), its stored bins (bins) and the rule-variant comparison (variants); imports none of them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from stallscan.replay.boundary_variants import VARIANTS
from stallscan.store.errors import StallscanError
from stallscan.sweep.bootstrap import Parts, index_keys

POLICIES = ("router", "gap-only")
POLICY_ALIASES = {"vgr": "router", "gap_only": "gap-only"}  # older names, still accepted
ALL_POLICIES = (*POLICIES, *VARIANTS)  # with the router's rule variants (`sweep --policy all`, the report)


@dataclass
class Curve:
    policy: str
    group: str
    thresholds: np.ndarray
    gap: dict[str, np.ndarray]  # population "gap": the events the gap rule decides: tp, fp, fn, tn arrays
    all: dict[str, np.ndarray]  # population "all": every user-role event that starts a request
    cost: np.ndarray  # weighted cost over "all" (= gap population + constant)
    n_gap: int = 0
    n_all: int = 0


@dataclass
class SweepResult:
    thresholds: np.ndarray
    curves: list[Curve]
    recommendation: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)  # (policy, group) -> dict
    cost_auto_as_human: float = 1.0
    cost_human_as_auto: float = 1.0
    bootstrap: int = 0
    variants: list[dict[str, Any]] = field(
        default_factory=list
    )  # rule variants vs the router (stallscan.sweep.variants)
    rule_advice: str | None = None  # which single rule change would help this corpus most
    left_out: list[dict[str, Any]] = field(default_factory=list)  # tool results not scored (stallscan.sweep.core)


def policy_name(policy: str) -> str:
    """The one name of a policy (`vgr` was the router's old name)."""
    return POLICY_ALIASES.get(policy, policy)


def thresholds_grid(lo: float = 0.0, hi: float = 30.0, step: float = 0.05) -> np.ndarray:
    if step <= 0 or hi < lo:
        raise StallscanError("need --min <= --max and --step > 0", hint="e.g. --min 0 --max 30 --step 0.05")
    n = round((hi - lo) / step) + 1
    return np.round(lo + step * np.arange(n), 10)


CELL_COLUMNS = ("grp", "sess", "bin", "human", "vgr_gap", "decided_human", "has_gap", "first_in_session", "by_fallback")


def gap_bins(t: np.ndarray, gap_s: np.ndarray) -> np.ndarray:
    """Bin k of a gap = the number of thresholds <= gap (no gap: bin of 0 s, never read for it)."""
    bins: np.ndarray = np.searchsorted(t, np.nan_to_num(np.asarray(gap_s, dtype=float), nan=0.0), side="right")
    return bins


def sweep_cells(rows: dict[str, np.ndarray], t: np.ndarray) -> dict[str, np.ndarray]:
    """The rows of sweep_input.sql (or sweep_input_narrow.sql / sweep_bins_input.sql: vgr_gap for decided_by, and
    <variant>_gap for <variant>_decided_by) as cells (CELL_COLUMNS + n), one a row."""
    gap = rows["gap_s"]
    has_gap = ~np.isnan(gap.astype(float)) if gap.dtype.kind == "f" else np.array([g is not None for g in gap])
    n = len(rows["human"])
    if "sess" in rows:  # dense session index from SQL (np.unique over strings costs seconds at 10M events)
        sess = np.asarray(rows["sess"])
    else:
        sess = np.unique(rows["session_id"], return_inverse=True)[1] if n else np.zeros(0, int)
    variant_flags = {  # the router's rule variants (stallscan.replay.boundary_variants), when loaded
        f"{col}_{k}": np.asarray(v, bool)
        for col in VARIANTS.values()
        if f"{col}_decided_human" in rows
        for k, v in (
            ("gap", rows[f"{col}_gap"] if f"{col}_gap" in rows else rows[f"{col}_decided_by"] == "gap"),
            ("decided_human", rows[f"{col}_decided_human"]),
        )
    }
    return {
        **variant_flags,
        # (one group: a read-only view of one object, not 1.25M references written at 10M events)
        "grp": rows["grp"] if "grp" in rows else np.broadcast_to(np.array("all", dtype=object), (n,)),
        "sess": sess,
        "bin": gap_bins(t, gap),
        "human": rows["human"].astype(bool),
        "vgr_gap": np.asarray(rows["vgr_gap"] if "vgr_gap" in rows else rows["decided_by"] == "gap", bool),
        "decided_human": rows["decided_human"].astype(bool),
        "has_gap": has_gap,
        "first_in_session": rows["first_in_session"].astype(bool),
        "by_fallback": np.asarray(rows["by_fallback"], bool) if "by_fallback" in rows else np.zeros(n, bool),
        "n": np.ones(n, float),
        **({"skey": np.asarray(rows["skey"], np.uint64)} if "skey" in rows else {}),  # the bootstrap's key
    }


def policy_split(cells: dict[str, np.ndarray], policy: str) -> tuple[np.ndarray, np.ndarray]:
    """(gap-decided mask, fixed decision for the others: True = called human)."""
    if "n" not in cells:  # rows of sweep_input.sql (stallscan.sweep.variants passes those)
        cells = sweep_cells(cells, np.zeros(0))
    policy = policy_name(policy)
    if policy == "router":
        decided_by_gap = cells["vgr_gap"]
        fixed_human = cells["decided_human"]
    elif policy in VARIANTS:  # the router's order with one rule added (turn_boundary_variants)
        decided_by_gap = cells[f"{VARIANTS[policy]}_gap"]
        fixed_human = cells[f"{VARIANTS[policy]}_decided_human"]
    elif policy == "gap-only":
        decided_by_gap = cells["has_gap"] & ~cells["first_in_session"]
        fixed_human = np.ones(len(decided_by_gap), bool)  # first message of a session, or no usable gap: human
    else:
        raise StallscanError(
            f"unknown policy {policy!r}", hint="router (or vgr), gap-only, " + ", ".join(VARIANTS) + " or all"
        )
    return decided_by_gap, fixed_human


def dense_index(sess: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """np.unique(sess, return_inverse=True) (the distinct values, sorted, and each one's rank): for a session index
    of non-negative integers (SQL's dense index, with the gaps of scope sessions without rows) by a count per value
    instead of a sort (1.25M rows at 10M generated events: 0.08 -> 0.005 s)."""
    s = np.asarray(sess)
    if s.dtype.kind not in "iu" or not len(s) or s.min() < 0 or s.max() > 4 * len(s) + 1024:
        out: tuple[np.ndarray, np.ndarray] = np.unique(s, return_inverse=True)
        return out
    present = np.bincount(s) > 0
    return np.flatnonzero(present).astype(s.dtype), (np.cumsum(present) - 1)[s]


@dataclass
class CellIndex:
    """What policy_parts reads of cells whatever the policy, computed once for every policy of a sweep: each cell's
    dense session index (`sess`: its rank among the sessions `uniq`), each session's bootstrap key, and the cells
    in (session, bin) order (`order`, stable) with that order's key session * nb + bin and weights n."""

    uniq: np.ndarray
    sess: np.ndarray
    keys: np.ndarray
    order: np.ndarray
    key: np.ndarray
    n: np.ndarray


def cell_index(c: dict[str, np.ndarray], nb: int) -> CellIndex:
    """The CellIndex of cells binned against nb - 1 thresholds."""
    if len(c["human"]):
        uniq, sess = dense_index(c["sess"])
    else:
        uniq, sess = np.zeros(0, int), np.zeros(0, int)
    keys = index_keys(uniq)
    if "skey" in c:
        keys[sess] = np.asarray(c["skey"], dtype=np.uint64)
    key = sess.astype(np.int64) * nb + c["bin"]
    # (one stable argsort for every policy's pairs, instead of an np.unique with its inverse per policy and kind:
    # the cells come about grouped by session)
    order = np.argsort(key, kind="stable")
    return CellIndex(uniq, sess, keys, order, key[order], np.asarray(c["n"], float)[order])


def policy_parts(
    c: dict[str, np.ndarray], policy: str, nb: int, index: CellIndex | None = None
) -> tuple[Parts, np.ndarray, np.ndarray]:
    """What the bootstrap needs of one policy over cells: the gap-decided (session, bin) counts of humans and
    of automatic events (sorted by session), the fixed (tp, fn, fp, tn) x session counts; each local session's
    key (its cells' `skey`, md5 of the session id; hand-built cells: its index's); the gap-decided mask.
    index: cell_index(c, nb) when the caller has it (the same for every policy)."""
    human, w = c["human"], np.asarray(c["n"], float)
    by_gap, fixed_human = policy_split(c, policy)
    ix = index if index is not None else cell_index(c, nb)
    sess, n_sess = ix.sess, len(ix.uniq)

    def pairs(mask: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        # np.unique(key[mask], return_inverse=True) and a bincount of the weights by that inverse: the masked
        # cells in the index's order are sorted already, each run of one key is a pair
        kept = mask[ix.order]
        ks = ix.key[kept]
        new = np.empty(len(ks), bool)
        new[:1] = True
        np.not_equal(ks[1:], ks[:-1], out=new[1:])
        key = ks[new]
        return key // nb, key % nb, np.bincount(np.cumsum(new) - 1, ix.n[kept], minlength=len(key))

    fx = ~by_gap
    fixed = np.stack(
        [
            np.bincount(sess[m], w[m], minlength=n_sess)
            for m in (
                fx & human & fixed_human,
                fx & human & ~fixed_human,
                fx & ~human & fixed_human,
                fx & ~human & ~fixed_human,
            )
        ]
    )  # (tp, fn, fp, tn) x sessions
    return (pairs(by_gap & human), pairs(by_gap & ~human), fixed), ix.keys.copy(), by_gap


def curve_rows(res: SweepResult) -> list[dict[str, Any]]:
    """Flat rows (threshold x policy x group x population) with precision / recall / F1 / cost."""
    out: list[dict[str, Any]] = []
    for c in res.curves:
        for pop, m in (("gap", c.gap), ("all", c.all)):
            tp, fp, fn, tn = (np.asarray(m[k], float) for k in ("tp", "fp", "fn", "tn"))
            with np.errstate(divide="ignore", invalid="ignore"):
                prec = np.where(tp + fp > 0, tp / (tp + fp), np.nan)
                rec = np.where(tp + fn > 0, tp / (tp + fn), np.nan)
                f1 = np.where(prec + rec > 0, 2 * prec * rec / (prec + rec), np.nan)
            cost = res.cost_auto_as_human * fp + res.cost_human_as_auto * fn
            for i, thr in enumerate(c.thresholds):
                out.append(
                    {
                        "threshold": float(thr),
                        "policy": c.policy,
                        "group": c.group,
                        "population": pop,
                        "tp": int(tp[i]),
                        "fp": int(fp[i]),
                        "fn": int(fn[i]),
                        "tn": int(tn[i]),
                        "precision": _f(prec[i]),
                        "recall": _f(rec[i]),
                        "f1": _f(f1[i]),
                        "auto_as_human": int(fp[i]),
                        "human_as_auto": int(fn[i]),
                        "cost": float(cost[i]),
                    }
                )
    return out


def _f(x: float) -> float | None:
    return None if np.isnan(x) else round(float(x), 6)
