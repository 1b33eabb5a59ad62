"""Spark data source ``rocketmq``: streaming source, batch reader and sink, on PySpark's Python Data Source API.

    from spark_connector import register
    register(spark)                       # spark.dataSource.register(RocketMQDataSource)
    df = (spark.readStream.format("rocketmq")
          .option("namesrvAddr", "127.0.0.1:9876").option("subscribe", "orders").load())

Needs pyspark >= 4.2 (admission control and ``Trigger.AvailableNow`` for Python sources) and pyarrow. Options are
in :mod:`spark_connector.options`, the read schema in :mod:`spark_connector.schema`, sink columns in
:mod:`spark_connector.sink`. The package talks to RocketMQ only through the project's public client API.

The Spark-facing names are imported lazily, so the pure modules (options, offsets, planning) import without pyspark.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from spark_connector.options import OptionError
from spark_connector.planning import DataLossError

if TYPE_CHECKING:
    from spark_connector.datasource import FORMAT, RocketMQDataSource, register

__all__ = ["FORMAT", "DataLossError", "OptionError", "RocketMQDataSource", "register"]


def __getattr__(name: str) -> Any:
    if name in ("FORMAT", "RocketMQDataSource", "register"):
        from spark_connector import datasource

        return getattr(datasource, name)
    raise AttributeError(f"module 'spark_connector' has no attribute {name!r}")
