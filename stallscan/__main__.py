"""`python -m stallscan ...`: the same typer app as the `stallscan` script."""

from stallscan.cli import app

app(prog_name="stallscan")
