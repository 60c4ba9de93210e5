"""Spark: the same replay on a cluster (PySpark >= 4, the optional extra `stallscan[spark]`).

`task` is what one Spark task runs on one group of whole sessions (DuckDB over the group's Arrow table,
no pyspark import); `job` is the driver (imports pyspark lazily, so the base install works without it).
"""
