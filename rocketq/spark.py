"""``rocketq.spark``: the Spark data source ``rocketmq`` (``spark_connector``; needs the extra ``[spark]``)::

    from rocketq.spark import register
    register(spark)
    df = spark.readStream.format("rocketmq").option("namesrvAddr", "127.0.0.1:9876").option("subscribe", "t").load()

As in ``spark_connector``, the pyspark-facing names load on first use, so this module imports without pyspark.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import rocketq  # noqa: F401  (pins the top-level packages first: rocketq._packages)

# isort: split
import spark_connector
from spark_connector import DataLossError, OptionError

if TYPE_CHECKING:
    from spark_connector import FORMAT, RocketMQDataSource, register

__all__ = ["FORMAT", "DataLossError", "OptionError", "RocketMQDataSource", "register"]
__getattr__ = spark_connector.__getattr__  # FORMAT, RocketMQDataSource, register: loaded with pyspark on first use
