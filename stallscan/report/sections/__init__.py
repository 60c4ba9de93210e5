"""The report's built-in sections; each registers itself in stallscan.report.registry (order: registry.ORDER)."""

from stallscan.report.sections import boundaries, corpus, stalls, threshold  # noqa: F401
