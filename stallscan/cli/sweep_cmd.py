"""`stallscan sweep`: tune the gap threshold against the marker-based truth."""

from __future__ import annotations

import csv
import json
import sys
from typing import TYPE_CHECKING

import typer

from stallscan.store.errors import StallscanError

from . import DbOpt, _guard, app
from ._lazy import Console, connect, default_db_path

if TYPE_CHECKING:
    import numpy as np


@app.command()
@_guard
def sweep(
    db: str | None = DbOpt,
    lo: float = typer.Option(0.0, "--min", help="Smallest threshold (s)."),
    hi: float = typer.Option(30.0, "--max", help="Largest threshold (s)."),
    step: float = typer.Option(0.05, "--step", help="Grid step (s)."),
    thresholds: str | None = typer.Option(None, "--thresholds", help="Comma-separated list instead of a grid."),
    cost_a: float = typer.Option(1.0, "--cost-auto-as-human", help="Cost of an automatic prompt read as a human turn."),
    cost_b: float = typer.Option(1.0, "--cost-human-as-auto", help="Cost of a human turn read as automatic."),
    by: str = typer.Option("none", "--by", help="none, harness, source_format or model."),
    policy: str = typer.Option(
        "all",
        "--policy",
        help="router (or vgr), gap-only, marker-aware, notification-aware, marker+notification, or all.",
    ),
    bootstrap: int = typer.Option(1000, "--bootstrap", help="Session resamples for the interval (0: none)."),
    seed: int = typer.Option(0, "--seed", help="Bootstrap seed."),
    out: str = typer.Option("table", "--format", help="table, json or csv (csv: the full curve)."),
) -> None:
    """Recommended threshold (minimum cost), its bootstrap interval, and the figures at 2.0 s; for the rule
    variants, the errors each removes / adds versus the router order and which single rule change helps most."""
    from stallscan.report.render_sweep import sweep_renderable
    from stallscan.sweep.core import ALL_POLICIES, curve_rows, run_sweep, thresholds_grid

    if thresholds:
        try:
            grid: list[float] | np.ndarray = sorted(float(x) for x in thresholds.split(",") if x.strip())
        except ValueError:
            raise StallscanError(f"--thresholds must be numbers: {thresholds!r}", hint="e.g. --thresholds 0.5,1,2,5")
    else:
        grid = thresholds_grid(lo, hi, step)
    policies = ALL_POLICIES if policy == "all" else (policy,)
    con = connect(db or default_db_path())
    res = run_sweep(con, grid, cost_a, cost_b, by, policies, bootstrap, seed)
    con.close()
    recs = [dict(v) for v in res.recommendation.values()]
    if out == "json":
        doc = {"recommendations": recs, "variants": res.variants, "rule_advice": res.rule_advice}
        sys.stdout.write(json.dumps(doc | {"curve": curve_rows(res)}, indent=1) + "\n")
    elif out == "csv":
        rows = curve_rows(res)
        w = csv.DictWriter(sys.stdout, fieldnames=list(rows[0]) if rows else ["threshold"])
        w.writeheader()
        w.writerows(rows)
    else:
        Console().print(sweep_renderable(res))
