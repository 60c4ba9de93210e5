"""The router's rule variants against the router order, event by event, and the advice a router author can act on.

`run_sweep` sweeps each variant (stallscan.replay.boundary_variants) exactly like the router: the same
sorted pass, the same session bootstrap. Here each variant's event-level errors are set against the
router's: the errors it removes and the ones it adds, at each policy's recommended threshold and at the
reference threshold (2 s by default: the rule change alone). `rule_advice` picks the single rule change
(marker-aware or notification-aware; the combination is two changes) that lowers the cost most.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import duckdb
import numpy as np

from stallscan.replay.boundaries_ref import GAP_THRESHOLD_S
from stallscan.replay.boundary_variants import SINGLE, VARIANTS
from stallscan.store import sql
from stallscan.store.errors import StallscanError
from stallscan.sweep.cells import policy_split, sweep_cells

if TYPE_CHECKING:
    from stallscan.sweep.cells import SweepResult

ROUTER = "router"
WHAT = {
    "marker-aware": (
        "treat a user message that follows an interrupt, abort or cancel marker, or that opens a new harness "
        "turn (Codex task_started), as a new human turn whatever its completion report or gap"
    ),
    "notification-aware": (
        "never let a record of a known automatic kind (task / subagent notifications, compaction and idle "
        "continuations, hook re-prompts) open a turn, whatever its gap"
    ),
    "marker+notification": "apply both the marker rule and the known-automatic rule",
}


def _fresh(con: duckdb.DuckDBPyConnection) -> bool:
    """turn_boundary_variants exists and was built from the current turn_boundaries: its stored rows
    (turn_boundary_variants_marked; the others are turn_boundaries' own) are rows of it, at its threshold."""
    if not all(
        sql.has_table(con, t, schema=None, temporary=None)
        for t in ("turn_boundary_variants", "turn_boundary_variants_marked")
    ):
        return False
    return not _one(
        con,
        "SELECT count(*) FROM turn_boundary_variants_marked v ANTI JOIN turn_boundaries_by_seq b "
        "ON b.event_id = v.event_id AND b.threshold = v.threshold",
    )


def _one(con: duckdb.DuckDBPyConnection, query: str) -> Any:
    row = sql.first(con.execute(query))
    return row[0] if row else None


def variant_columns(con: duckdb.DuckDBPyConnection, session_ids: np.ndarray) -> dict[str, np.ndarray]:
    """Per sweep row (same order as sweep/sweep_input), each variant's deciding step and decision."""
    if not _fresh(con):
        from stallscan.replay.boundaries import replay_boundaries
        from stallscan.replay.boundary_variants import replay_variants

        if not sql.has_table(con, "turn_boundaries", schema=None):
            replay_boundaries(con, summary=False)  # (which builds the variants too)
        replay_variants(con)
    sql.run(con, "sweep/sweep_picks")  # (the macros sweep_variants_input.sql uses)
    cols = sql.query(con, "sweep/sweep_variants_input").fetchnumpy()
    sid = cols.pop("session_id")
    if len(sid) != len(session_ids) or not np.array_equal(np.asarray(sid, object), np.asarray(session_ids, object)):
        raise StallscanError("rule-variant rows do not line up with the sweep rows", hint="run `stallscan boundaries`")
    return cols


def event_errors(
    rows: dict[str, np.ndarray],
    policy: str,
    threshold: float,
    t: np.ndarray | None = None,
    flags: dict[str, np.ndarray] | None = None,
) -> np.ndarray:
    """Per row (or per cell: rows of sweep_cells, binned against the sorted grid `t`): does `policy` at
    `threshold` get it wrong (either kind)? flags: the rows' sweep_cells when already made (their policy
    flags are read, not made again for each policy and threshold)."""
    by_gap, fixed_human = policy_split(rows if flags is None else flags, policy)
    if "bin" in rows:  # a gap >= t[k] iff its bin (the number of thresholds <= gap) is > k
        k = int(np.searchsorted(t, threshold)) if t is not None else -1
        if t is None or k >= len(t) or t[k] != threshold:
            raise StallscanError(f"threshold {threshold:g} s is not on the binned grid", hint="sweep the rows")
        over = rows["bin"] > k
    else:
        over = np.nan_to_num(np.asarray(rows["gap_s"], dtype=float), nan=0.0) >= threshold
    called_human = np.where(by_gap, over, fixed_human)
    return np.asarray(called_human != rows["human"].astype(bool))


def _n(rows: dict[str, np.ndarray], mask: np.ndarray) -> int:
    """Events under a mask: rows count one each, cells their n."""
    return int(rows["n"][mask].sum()) if "n" in rows else int(mask.sum())


def _split(
    rows: dict[str, np.ndarray],
    policy: str,
    threshold: float,
    human: np.ndarray,
    router_err: np.ndarray,
    t: np.ndarray | None,
    flags: dict[str, np.ndarray] | None,
) -> dict[str, Any]:
    err = event_errors(rows, policy, threshold, t, flags)
    return {
        "threshold": float(threshold),
        "errors": _n(rows, err),
        "auto_as_human": _n(rows, err & ~human),
        "human_as_auto": _n(rows, err & human),
        "removed": _n(rows, router_err & ~err),
        "added": _n(rows, ~router_err & err),
    }


def compare_variants(
    res: SweepResult, rows: dict[str, np.ndarray], by: str, reference: float = GAP_THRESHOLD_S
) -> list[dict[str, Any]]:
    """One row per (variant, group): its recommendation, and the errors it removes / adds versus the router
    (each at its own recommended threshold, and both at `reference`)."""
    out = []
    groups = ["all"] if by == "none" else sorted(set(rows["grp"].tolist()))
    for g in groups:
        sel = np.ones(len(rows["grp"]), bool) if by == "none" else rows["grp"] == g
        part = {k: v[sel] for k, v in rows.items()}
        human = part["human"].astype(bool)
        rr = res.recommendation.get((ROUTER, g))
        if rr is None or rr["threshold"] is None:
            continue
        t = res.thresholds
        flags = None if "n" in part else sweep_cells(part, np.zeros(0))  # (rows: their policy flags, made once)
        r_best = event_errors(part, ROUTER, rr["threshold"], t, flags)
        r_ref = event_errors(part, ROUTER, reference, t, flags)
        for v in VARIANTS:
            rv = res.recommendation.get((v, g))
            if rv is None or rv["threshold"] is None:
                continue
            best = _split(part, v, rv["threshold"], human, r_best, t, flags)
            ref = _split(part, v, reference, human, r_ref, t, flags)
            out.append(
                {
                    "policy": v,
                    "group": g,
                    "rule": WHAT[v],
                    "threshold": rv["threshold"],
                    "interval": rv["interval"],
                    "cost": rv["cost"],
                    "errors": best["errors"],
                    "auto_as_human": best["auto_as_human"],
                    "human_as_auto": best["human_as_auto"],
                    "removed": best["removed"],
                    "added": best["added"],
                    "router_threshold": rr["threshold"],
                    "router_interval": rr["interval"],
                    "router_cost": rr["cost"],
                    "router_errors": _n(part, r_best),
                    "at_reference": {
                        "threshold": float(reference),
                        "errors": ref["errors"],
                        "removed": ref["removed"],
                        "added": ref["added"],
                        "router_errors": _n(part, r_ref),
                    },
                }
            )
    return out


def _s(x: float) -> str:
    return f"{x:.2f} s"


def rule_advice(variants: list[dict[str, Any]]) -> str | None:
    """One sentence: which single rule change would lower this corpus's cost most (summed over groups)."""
    if not variants:
        return None
    single = [v for v in variants if v["policy"] in SINGLE]
    gain: dict[str, float] = {}
    for v in single:
        gain[v["policy"]] = gain.get(v["policy"], 0.0) + (v["router_cost"] - v["cost"])
    router_errors = sum(v["router_errors"] for v in variants if v["policy"] == single[0]["policy"]) if single else 0
    groups = sorted({v["group"] for v in variants})
    if not gain or max(gain.values()) <= 0:
        where = f" ({_s(variants[0]['router_threshold'])} here)" if len(groups) == 1 else ""
        return (
            "No single rule change beats the router order on this corpus (neither the marker rule nor the "
            f"known-automatic rule lowers its cost): keep the order and use its recommended threshold{where}."
        )
    best = max(gain, key=lambda p: (gain[p], -SINGLE.index(p)))
    rows = [v for v in single if v["policy"] == best]
    removed, added = sum(v["removed"] for v in rows), sum(v["added"] for v in rows)
    text = (
        f"The single rule change that helps this corpus most is {best}: {WHAT[best]}; "
        f"it removes {removed} of the router's {router_errors} errors and adds {added}"
    )
    if len(rows) == 1:
        r = rows[0]
        iv = r["interval"]
        text += f" (recommended threshold {_s(r['threshold'])}"
        text += f", 95% interval {iv[0]:.2f}–{iv[1]:.2f} s" if iv else ""
        text += f"; router {_s(r['router_threshold'])})"
    return text + "."
