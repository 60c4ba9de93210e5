"""Tune the router's gap threshold: every threshold in one sorted pass, a session bootstrap interval.

For the user-role events the gap rule decides (after a final reply, with a trustworthy gap) a threshold t
calls an event a new human turn iff gap >= t. Each gap is binned once against the sorted thresholds
(`searchsorted`); suffix sums of the per-bin counts give TP/FP/FN/TN at every threshold at once, so
1,000 thresholds cost about what one costs. The bootstrap resamples *sessions* with replacement and
re-weights the same bins (bincount), never re-sorting. Events decided by rules that need no time
(header, first message, completion report, no trustworthy time) add fixed counts to the "all" population.

Policies: `router` (older name `vgr`, still accepted) = the router's full order (header -> completion report -> gap); the rule
variants `marker-aware`, `notification-aware`, `marker+notification` (stallscan.replay.boundary_variants)
= that order with one rule added, swept the same way (stallscan.sweep.variants compares them with the
router event by event and words the advice); `gap-only` = the gap rule
alone after any earlier reply (events without a usable gap are called human, as the router's no_time
rule does); `labels` = the marker-based labels themselves, the ceiling (no errors by construction: it is
the truth this tool measures against), reported with how many events no marker decided (`by_fallback`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import duckdb
import numpy as np

from stallscan.replay import registry
from stallscan.replay.boundaries_ref import GAP_THRESHOLD_S
from stallscan.replay.boundary_variants import VARIANTS
from stallscan.store import checkpoint, sql
from stallscan.store.beside import Beside
from stallscan.store.errors import StallscanError
from stallscan.sweep import bootstrap as boot
from stallscan.sweep.bootstrap import Parts, Sums
from stallscan.sweep.cells import (
    ALL_POLICIES,
    CELL_COLUMNS,
    POLICIES,
    POLICY_ALIASES,
    Curve,
    SweepResult,
    cell_index,
    curve_rows,
    gap_bins,
    policy_name,
    policy_split,
    sweep_cells,
    thresholds_grid,
)
from stallscan.sweep.point import labels_ceiling, point, set_interval

# the sweep's public names (those of stallscan.sweep.cells re-exported)
__all__ = [
    "ALL_POLICIES",
    "CELL_COLUMNS",
    "POLICIES",
    "POLICY_ALIASES",
    "Curve",
    "SweepResult",
    "curve_rows",
    "gap_bins",
    "load_rows",
    "policy_name",
    "policy_split",
    "run_sweep",
    "sweep_cells",
    "sweep_from_cells",
    "sweep_table",
    "thresholds_grid",
]


def _inputs_ready(con: duckdb.DuckDBPyConnection, by: str) -> str:
    """turn_boundaries replayed (at 2 s) when missing, scope_sessions = every session when no report made
    it; returns the group column `by` names. (One catalog query when all three are there, as in a report: the
    four has_table look-ups it made cost 4-5 CPU ms a call, two calls a report.)"""
    present = sql.anywhere(con)
    if "turn_boundaries" not in present:
        from stallscan.replay.boundaries import replay_boundaries

        replay_boundaries(con, summary=False)
        present = sql.anywhere(con)
    # (a replay from before turn_boundaries_by_seq: refreshed with its own options, which re-derives it when the
    # events changed; otherwise, and for a turn_boundaries made by hand, a temp view of that name over it)
    if "turn_boundaries_by_seq" not in present and sql.has_table(con, "turn_boundaries_narrow"):
        registry.refresh(con, "turn_boundaries")
        present = sql.anywhere(con)
    if "turn_boundaries_by_seq" not in present:
        con.execute("CREATE OR REPLACE TEMP VIEW turn_boundaries_by_seq AS SELECT * FROM turn_boundaries")
    if "scope_sessions" not in present:
        con.execute("CREATE OR REPLACE TEMP TABLE scope_sessions AS SELECT DISTINCT session_id FROM events")
    by = {"harness": "source_format"}.get(by, by)
    if by not in ("none", "source_format", "model"):
        raise StallscanError(f"cannot group by {by!r}", hint="harness, source_format or model")
    return by


def load_rows(
    con: duckdb.DuckDBPyConnection, by: str = "none", variants: bool = True, narrow: bool = False
) -> dict[str, np.ndarray]:
    """The rows of sweep/sweep_input.sql as numpy columns (with the rule variants' columns when `variants`).
    narrow (by = none, no variants): sweep_input_narrow.sql's numbers only, what sweep_cells reads (no
    session_id, grp or decided_by: vgr_gap instead)."""
    by = _inputs_ready(con, by)
    from stallscan.store import arrow

    if narrow and by == "none" and not variants:
        return arrow.numpy_columns(sql.relation(con, "sweep/sweep_input_narrow").to_arrow_table())
    # (through Arrow: a string column becomes one Python object per distinct value, not one per row)
    rows = arrow.numpy_columns(sql.relation(con, "sweep/sweep_input", {"by": by}).to_arrow_table())
    if variants:
        from stallscan.sweep.variants import variant_columns

        rows.update(variant_columns(con, rows["session_id"]))
    return rows


def run_sweep(
    con: duckdb.DuckDBPyConnection,
    thresholds: np.ndarray | Sequence[float],
    cost_auto_as_human: float = 1.0,
    cost_human_as_auto: float = 1.0,
    by: str = "none",
    policies: tuple[str, ...] = POLICIES,
    bootstrap: int = 1000,
    seed: int = 0,
    current: float = GAP_THRESHOLD_S,
    counted: Callable[[duckdb.DuckDBPyConnection], object] | None = None,
) -> SweepResult:
    """The sweep of `policies` over `thresholds`; `current` is the router's threshold in use, the one the
    advice keeps when it lies on the optimal plateau (stallscan.sweep.plateau).

    counted: brings the report's per-session counts of the turn-boundary replay (boundary_cells) up to date
    with turn_boundaries; given (by the report), the tool results left out are read from them."""
    policies = tuple(dict.fromkeys(policy_name(p) for p in policies))
    if any(p in VARIANTS for p in policies) and "router" not in policies:
        policies = ("router", *policies)  # the variants are measured against the router order
    # (return_index: numpy 2 then skips its masked-array check, and with it numpy.ma's import)
    t = np.unique(np.asarray(thresholds, dtype=float), return_index=True)[0]
    from stallscan.sweep import bins
    from stallscan.sweep import boot as stored_sums

    # the report's grid: the stored per-session cells (sweep_bins), derived once; else the rows, binned here
    stored, n_sess = None, None
    sums: dict[str, Sums] | None = None
    known: set[str] = set()
    group = _inputs_ready(con, by)
    usable = bins.usable(con, t) and bins.refresh(con) is not None
    # the sweep's bins are written (and the stored bootstrap sums they serve): a report's armed checkpoint of its
    # writes runs from here beside the reads and the numpy work below (store/checkpoint.py; nothing when none is
    # armed; sums computed anew are stored at the end, after it)
    checkpoint.writes_done(con)
    if usable:
        if bootstrap and by == "none":
            totals, n_all, whole = bins.load_totals(con)
            if whole:  # the scope holds every session: the stored bootstrap sums serve it
                sums = stored_sums.load(con, bootstrap, seed, len(t) + 1)
                known = set(sums)
                if known >= set(policies):  # nothing needs a session's part: the cells summed over sessions
                    stored, n_sess = totals, n_all
        if stored is None:
            stored = bins.load_cells(con, group, fresh=True)
    if stored is not None:
        rows = cells = stored
    else:
        rows = load_rows(con, by, variants=any(p in VARIANTS for p in policies), narrow=True)
        cells = sweep_cells(rows, t)
    # The tool results left out are DuckDB's work, the sweep from here numpy's: the count runs on its own thread
    # meanwhile (DuckDB and numpy release the GIL), filling the CPU the sweep's serial steps leave idle. Nothing
    # else uses the connection until it is done.
    left_out = Beside(
        tool_results_left_out, con, by, cost_auto_as_human, cost_human_as_auto, counted, name="stallscan-left-out"
    )
    try:
        res = sweep_from_cells(
            cells, t, cost_auto_as_human, cost_human_as_auto, by, policies, bootstrap, seed, current, sums, n_sess
        )
        if any(p in VARIANTS for p in policies):
            from stallscan.sweep.variants import compare_variants, rule_advice

            res.variants = compare_variants(res, rows, by)
            res.rule_advice = rule_advice(res.variants)
    finally:
        left_out.join()  # (also after a failure: the connection is the count's until it is done)
    res.left_out = left_out.result()
    if sums and set(sums) != known and bins.writable(con):  # computed here: kept for the next report
        stored_sums.store(con, bootstrap, seed, sums)
    return res


def tool_results_left_out(
    con: duckdb.DuckDBPyConnection,
    by: str,
    a: float = 1.0,
    b: float = 1.0,
    counted: Callable[[duckdb.DuckDBPyConnection], object] | None = None,
) -> list[dict[str, Any]]:
    """Per group: the tool results the sweep does not score, and the errors (and cost) the router and
    gap-only make on them at the replayed threshold: gap-only's row looks better than the router's partly
    because its errors on tool results are not in it (issue 23). counted: see run_sweep (the same counts
    from boundary_cells instead of every tool-result row; not by model, which the cells do not hold)."""
    by = _inputs_ready(con, by)
    if counted is not None and by != "model":  # (the cells are counted from the replay's decisions)
        counted(con)
        cur = sql.query(con, "sweep/tool_results_left_out_cells", {"by": by})
    else:
        have = {r[0] for r in con.execute("DESCRIBE turn_boundaries").fetchall()}
        if not {"threshold", "error", "gap_only_error", "origin", "starts_request"} <= have:
            return []  # a turn_boundaries built by hand (tests, notebooks) without the replay's decisions
        cur = sql.query(con, "sweep/tool_results_left_out", {"by": by})
    cols = [d[0] for d in cur.description]
    out = []
    for r in (dict(zip(cols, x)) for x in cur.fetchall()):
        row: dict[str, Any] = {"group": r["grp"], "threshold": r["threshold"], "tool_results": r["tool_results"]}
        for p, k in (("router", "router"), ("gap-only", "gap_only")):
            ah, ha = int(r[f"{k}_auto_as_human"]), int(r[f"{k}_human_as_auto"])
            row[p] = {"auto_as_human": ah, "human_as_auto": ha, "misread": ah + ha, "cost": a * ah + b * ha}
        out.append(row)
    return out


# The sweep needs, per event, only its session, its gap bin and five flags. `sweep_cells` reduces the
# local rows to that (n = 1 a row); stallscan.spark aggregates the same columns per (session, bin, flags)
# with n = the count, and both engines finish in `sweep_from_cells`, so recommendation and interval are
# computed by one piece of code. `sess` is any order-preserving session key (the dense index below
# follows the session_id order, which the bootstrap's resampling depends on).
def sweep_from_cells(
    cells: dict[str, np.ndarray],
    t: np.ndarray,
    cost_auto_as_human: float = 1.0,
    cost_human_as_auto: float = 1.0,
    by: str = "none",
    policies: tuple[str, ...] = POLICIES,
    bootstrap: int = 1000,
    seed: int = 0,
    current: float = GAP_THRESHOLD_S,
    sums: dict[str, Sums] | None = None,
    n_sess: int | None = None,
) -> SweepResult:
    """The sweep over cells binned against the sorted, unique thresholds `t` (see sweep_cells).

    sums (by == "none" only): per policy, the bootstrap's per-resample sums of these very cells when known
    (table sweep_boot, stallscan.sweep.boot); the policies missing are computed and added to it.
    n_sess: how many sessions the cells hold when they are summed over sessions (stallscan.sweep.bins.
    load_totals: one session index for all; `sums` then holds every policy, no session's part is read)."""
    res = SweepResult(t, [], {}, cost_auto_as_human, cost_human_as_auto, bootstrap)
    groups = ["all"] if by == "none" else sorted(set(cells["grp"].tolist())) if len(cells["grp"]) else []
    done: dict[tuple[str, str], tuple[Curve, dict[str, Any]]] = {}
    for g in groups:
        sel = None if by == "none" else cells["grp"] == g
        part = cells if sel is None else {k: v[sel] for k, v in cells.items()}  # (one group: the cells, not a copy)
        a, b = cost_auto_as_human, cost_human_as_auto
        ix = cell_index(part, len(t) + 1)  # (what every policy's parts read of the cells, computed once)
        one = [point(part, t, p, g, a, b, current, n_sess, ix) for p in policies]
        g_sess = one[0][3] if one else 0  # (this group's: n_sess, the argument, stays for the next group)
        if bootstrap and g_sess > 1 and len(t):  # every policy of a group draws the same resamples
            keep = sums if sums is not None and by == "none" else {}
            _fill_sums(
                keep, [(p, x[2], x[4]) for p, x in zip(policies, one) if p not in keep], len(t) + 1, bootstrap, seed
            )
            picked: dict[int, np.ndarray] = {}  # (policies sharing their sums share their picks)
            for p, (_, rec, _, _, _) in zip(policies, one):
                s = keep[p]
                if id(s) not in picked:
                    picked[id(s)] = boot.picks_from_sums(s, t, a, b, current)
                set_interval(rec, picked[id(s)])
        done.update({(p, g): (x[0], x[1]) for p, x in zip(policies, one)})
    for policy in policies:  # policy-major, then group: the order the report lists them in
        for g in groups:
            res.curves.append(done[(policy, g)][0])
            res.recommendation[(policy, g)] = done[(policy, g)][1]
    for g in ["all"] if by == "none" else groups:
        sel = np.ones(len(cells["grp"]), bool) if by == "none" else cells["grp"] == g
        res.recommendation[("labels", g)] = labels_ceiling(cells, sel, g)
    return res


def _fill_sums(
    keep: dict[str, Sums], missing: list[tuple[str, Any, np.ndarray]], nb: int, n_boot: int, seed: int
) -> None:
    """keep[policy] = the per-resample sums of each missing (policy, parts, keys): policies over the same sessions
    share one pass over the resamples (bootstrap.sums_many draws each resample's weights once for all of them),
    and policies with the very same parts (a rule variant that decides every event as the router does: no
    marker, no known automatic record) share one set of sums, computed once."""
    while missing:
        keys = missing[0][2]
        same = [m for m in missing if np.array_equal(m[2], keys)]
        distinct: list[Parts] = []
        slot = []
        for _, parts, _ in same:
            j = next((i for i, d in enumerate(distinct) if _same_parts(d, parts)), len(distinct))
            if j == len(distinct):
                distinct.append(parts)
            slot.append(j)
        computed = boot.sums_many(distinct, keys, nb, n_boot, seed)
        for (p, _, _), j in zip(same, slot):
            keep[p] = computed[j]
        missing = [m for m in missing if not np.array_equal(m[2], keys)]


def _same_parts(x: Parts, y: Parts) -> bool:
    """Whether two policies' bootstrap parts are equal (the same pairs and counts, the same fixed counts)."""
    return all(np.array_equal(a, b) for px, py in zip(x[:2], y[:2]) for a, b in zip(px, py)) and np.array_equal(
        x[2], y[2]
    )


def sweep_table(con: duckdb.DuckDBPyConnection, thresholds: np.ndarray | None = None, **kw: Any) -> SweepResult:
    """Run the default sweep and store it as table `sweep` (for export)."""
    import pyarrow as pa

    res = run_sweep(
        con, thresholds if thresholds is not None else thresholds_grid(), bootstrap=kw.pop("bootstrap", 0), **kw
    )
    rows = curve_rows(res)
    tbl = pa.Table.from_pylist(rows) if rows else pa.table({"threshold": pa.array([], pa.float64())})
    con.register("_sweep", tbl)
    con.execute("CREATE OR REPLACE TABLE sweep AS SELECT * FROM _sweep")
    con.unregister("_sweep")
    return res


registry.register(
    registry.Derived("sweep", ("sweep",), ("turn_boundaries",), lambda con, _: sweep_table(con), stamped=False)
)
