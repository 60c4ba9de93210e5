"""The options several commands share, declared once (typer `Annotated` types).

A command writes `threshold: Threshold = GAP_THRESHOLD_S`: the flag, its metavar and help come from here,
the default from the named constant where the rule lives (stallscan.replay.boundaries_ref,
stallscan.replay.stall_rules)."""

from __future__ import annotations

from typing import Annotated

import typer

Db = Annotated[
    str | None,
    typer.Option("--db", metavar="FILE", help="Database file (default: $STALLSCAN_DB or ./stallscan.duckdb)."),
]
Json = Annotated[bool, typer.Option("--json", help="Same as --format json.")]
Threshold = Annotated[float, typer.Option("--threshold", metavar="SECONDS", help="Gap rule threshold in seconds.")]
RetryBound = Annotated[
    int, typer.Option("--retry-bound", metavar="N", help="Consecutive stalls re-prompted before delivering.")
]
NarratedBound = Annotated[
    int, typer.Option("--narrated-bound", metavar="N", help="Narrated-intent re-prompts per turn.")
]
Bootstrap = Annotated[
    int, typer.Option("--bootstrap", metavar="N", help="Session resamples for the threshold interval.")
]
Seed = Annotated[int, typer.Option("--seed", metavar="N", help="Bootstrap seed.")]
# the filters of every command that lists sessions' rows (whole sessions: a session is in when it was active
# in the window, or holds this harness / model)
Since = Annotated[
    str | None, typer.Option("--since", metavar="TIME", help="Only sessions active at or after this time.")
]
Until = Annotated[str | None, typer.Option("--until", metavar="TIME", help="Only sessions active before this time.")]
Harnesses = Annotated[
    list[str] | None,
    typer.Option("--harness", metavar="NAME", help="Only sessions of this source format (repeatable)."),
]
# --limit N: at most N rows in a list; 0 means no limit on every command (each names its default)
Limit = Annotated[int, typer.Option("--limit", metavar="N", help="At most N rows in each list (0: all).")]
# --config FILE: the labels' prompt patterns and overrides; without it $STALLSCAN_CONFIG, else ./stallscan.toml
Config = Annotated[
    str | None,
    typer.Option(
        "--config",
        metavar="FILE",
        help="stallscan.toml with extra prompt patterns / label overrides "
        "(default: $STALLSCAN_CONFIG, else ./stallscan.toml if present).",
    ),
]
Models = Annotated[
    list[str] | None, typer.Option("--model", metavar="NAME", help="Only sessions using this model (repeatable).")
]
