"""`stallscan sweep`: tune the gap threshold against the marker-based truth."""

from __future__ import annotations

import csv
import json
import sys
from typing import TYPE_CHECKING

import typer

from stallscan.store.errors import StallscanError

from ._lazy import Console
from .common import _guard, open_db, out_format, scope_sessions
from .options import Config, Db, Harnesses, Json, Models, Seed, Since, Until

if TYPE_CHECKING:
    import numpy as np

app = typer.Typer()  # this module's commands (stallscan.cli.COMMANDS names it)


@app.command()
@_guard
def sweep(
    db: Db = None,
    lo: float = typer.Option(0.0, "--min", metavar="SECONDS", help="Smallest threshold."),
    hi: float = typer.Option(30.0, "--max", metavar="SECONDS", help="Largest threshold."),
    step: float = typer.Option(0.05, "--step", metavar="SECONDS", help="Grid step."),
    thresholds: str | None = typer.Option(
        None, "--thresholds", metavar="LIST", help="Comma-separated thresholds instead of a grid."
    ),
    cost_a: float = typer.Option(
        1.0, "--cost-auto-as-human", metavar="X", help="Cost of an automatic prompt read as a human turn."
    ),
    cost_b: float = typer.Option(
        1.0, "--cost-human-as-auto", metavar="X", help="Cost of a human turn read as automatic."
    ),
    by: str = typer.Option("none", "--by", metavar="<none|harness|source_format|model>", help="Group the sweep."),
    policy: str = typer.Option(
        "all",
        "--policy",
        metavar="<router|gap-only|marker-aware|notification-aware|marker+notification|all>",
        help="Decision order to tune (vgr = router, older name); the variants add one rule to the router's order.",
    ),
    bootstrap: int = typer.Option(
        1000, "--bootstrap", metavar="N", help="Session resamples for the interval (0: none)."
    ),
    seed: Seed = 0,
    harness: Harnesses = None,
    model: Models = None,
    since: Since = None,
    until: Until = None,
    config: Config = None,
    out: str = typer.Option("table", "--format", metavar="<table|json|csv>", help="Output (csv: the full curve)."),
    as_json: Json = False,
) -> None:
    """Recommended threshold (minimum cost), its bootstrap interval, and the figures at 2.0 s."""
    from stallscan.replay.labels import label_events
    from stallscan.report.render_sweep import sweep_renderable, sweep_view
    from stallscan.store import sql
    from stallscan.sweep.core import ALL_POLICIES, curve_rows, policy_name, run_sweep, thresholds_grid

    out = out_format(out, as_json, ("table", "json", "csv"))
    if cost_a < 0 or cost_b < 0:
        raise StallscanError("costs must be >= 0", hint="e.g. --cost-human-as-auto 5")
    if bootstrap < 0:
        raise StallscanError("--bootstrap must be >= 0", hint="e.g. --bootstrap 1000 (0: no interval)")
    if by not in ("none", "harness", "source_format", "model"):
        raise StallscanError(f"unknown --by {by!r}", hint="none, harness, source_format or model")
    if policy != "all" and policy_name(policy) not in ALL_POLICIES:
        raise StallscanError(
            f"unknown --policy {policy!r}", hint="one of: " + ", ".join(ALL_POLICIES) + ", all (vgr = router)"
        )
    if thresholds:
        try:
            grid: list[float] | np.ndarray = sorted(float(x) for x in thresholds.split(",") if x.strip())
        except ValueError:
            raise StallscanError(f"--thresholds must be numbers: {thresholds!r}", hint="e.g. --thresholds 0.5,1,2,5")
        if not grid or grid[0] < 0 or any(x != x for x in grid):
            raise StallscanError("--thresholds must be seconds >= 0", hint="e.g. --thresholds 0.5,1,2,5")
    else:
        if lo < 0 or hi < lo or step <= 0:
            raise StallscanError(
                f"bad range --min {lo:g} --max {hi:g} --step {step:g}: need 0 <= min <= max and step > 0",
                hint="e.g. --min 0 --max 30 --step 0.05",
            )
        grid = thresholds_grid(lo, hi, step)
    policies = ALL_POLICIES if policy == "all" else (policy_name(policy),)
    con = open_db(db)
    scope_sessions(con, since, until, harness, model)  # the sweep reads the sessions of scope_sessions
    label_events(con, config)
    res = run_sweep(con, grid, cost_a, cost_b, by, policies, bootstrap, seed)
    counts = dict(
        zip(
            ("records", "misread", "prompts", "tool_results"),
            sql.first(sql.query(con, "report/misread_counts")) or (0, 0, 0, 0),
        )
    )
    con.close()
    recs = [dict(v) for v in res.recommendation.values()]
    if out == "json":
        sys.stdout.write(
            json.dumps(
                {
                    "recommendations": recs,
                    "variants": res.variants,
                    "rule_advice": res.rule_advice,
                    "tool_results_left_out": res.left_out,
                    "misread_at_2s": counts,
                    "curve": curve_rows(res),
                },
                indent=1,
            )
            + "\n"
        )
    elif out == "csv":
        rows = curve_rows(res)
        w = csv.DictWriter(sys.stdout, fieldnames=list(rows[0]) if rows else ["threshold"], lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    else:
        note = (
            "prompts = user-role records that start a request, tool results left out: no threshold changes how "
            f"the router decides a tool result. `boundaries` counts {counts['misread']:,} misread turns at the "
            f"replayed threshold: {counts['prompts']:,} prompts + {counts['tool_results']:,} tool results."
        )
        Console().print(sweep_renderable(sweep_view(res), population=note))
