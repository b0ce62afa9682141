"""Common Crawl's columnar index (Parquet), read by Spark itself: no pyarrow, any filesystem
Spark reads (``s3a://`` on a Hadoop cluster), and only the columns and rows needed."""

from __future__ import annotations

from typing import Any

from warcdeboil.errors import ConfigError
from warcdeboil.run.selection import (
    CC_INDEX_COLUMNS,
    SelectedRecord,
    Selection,
    SiteFilter,
    group_spans,
)

__all__ = ["read_cc_index"]


def read_cc_index(spark: Any, location: str, sites: SiteFilter) -> Selection:
    """The records of the kept sites named by the index at ``location``, grouped by file."""
    from pyspark.errors import PySparkException
    from pyspark.sql import functions as F  # noqa: N812 - Spark's own convention

    try:
        table = spark.read.parquet(location).select(*CC_INDEX_COLUMNS)
    except PySparkException as exc:
        raise ConfigError(f"{location}: not a Common Crawl columnar index ({exc})") from exc
    if sites.sites:
        wanted = spark.createDataFrame([(site,) for site in sorted(sites.sites)], ["site"])
        host = F.regexp_replace(F.lower(F.col("url_host_name")), r"^www\.", "")
        domain = F.lower(F.col("url_host_registered_domain"))
        by_host = table.join(F.broadcast(wanted), host == wanted.site, "left_semi")
        by_domain = table.join(F.broadcast(wanted), domain == wanted.site, "left_semi")
        table = by_host.unionByName(by_domain)
    rows = table.select(
        "warc_filename", "warc_record_offset", "warc_record_length"
    ).distinct().collect()
    selection = group_spans(
        SelectedRecord(row[0], int(row[1]), int(row[2]))
        for row in rows if row[0] is not None and row[1] is not None and row[2] is not None
    )
    if not selection:
        raise ConfigError(f"{location}: the index names no record of the chosen sites")
    return selection
