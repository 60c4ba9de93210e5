"""The report's built-in sections; each registers itself in stallscan.report.registry (order: registry.ORDER)."""

from stallscan.report.sections import boundaries, corpus, guard, stalls, threshold  # noqa: F401
