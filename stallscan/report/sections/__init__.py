"""The report's built-in sections; each registers itself in stallscan.report.registry (registry.BUILTIN
names them, in report order)."""
