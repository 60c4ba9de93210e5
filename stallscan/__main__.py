"""`python -m stallscan ...`: the same entry as the `stallscan` script (stallscan.entry, then the typer app)."""

from stallscan.entry import main

main()
