"""``RocketMQDataSource``: the ``rocketmq`` format, wiring options to the readers and writers.

Options are validated where Spark first hands them over: ``schema()`` on ``.load()`` (so a bad source option fails
right there), ``reader``/``streamReader`` with the batch/streaming rules, ``writer``/``streamWriter`` for the sink.

Spark unpickles this class in a fresh Python worker for each query's planning (``.load()``'s schema, the streaming
source's driver worker), so the reader and writer modules are imported by the method that needs them: a source
query never imports the sink's encoder, and the ``.load()`` worker neither.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pyspark.sql.datasource import (
    DataSource,
    DataSourceReader,
    DataSourceStreamReader,
    DataSourceStreamWriter,
    DataSourceWriter,
)
from pyspark.sql.types import StructType

from spark_connector.options import OptionError, parse_sink_options, parse_source_options
from spark_connector.schema import read_schema

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

FORMAT = "rocketmq"


class RocketMQDataSource(DataSource):
    """The ``rocketmq`` format for ``spark.readStream``, ``spark.read``, ``writeStream`` and ``write``."""

    @classmethod
    def name(cls) -> str:
        return FORMAT

    def schema(self) -> StructType:
        # Called by .load(): validating here makes a bad option fail at once, naming the option.
        opts = parse_source_options(self.options, streaming=None)
        return read_schema(opts.include_properties)

    def _check_schema(self, schema: StructType, include_properties: bool) -> None:
        if schema != read_schema(include_properties):
            raise OptionError("rocketmq source: the schema is fixed; remove .schema(...) from the reader")

    def reader(self, schema: StructType) -> DataSourceReader:
        opts = parse_source_options(self.options, streaming=False)
        self._check_schema(schema, opts.include_properties)
        from spark_connector.source import RocketMQBatchReader

        return RocketMQBatchReader(opts)

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        opts = parse_source_options(self.options, streaming=True)
        self._check_schema(schema, opts.include_properties)
        from spark_connector.source import RocketMQStreamReader

        return RocketMQStreamReader(opts)

    def writer(self, schema: StructType, overwrite: bool) -> DataSourceWriter:
        if overwrite:
            raise OptionError("rocketmq sink: only append is supported (a topic cannot be overwritten)")
        from spark_connector.sink import RocketMQBatchWriter

        return RocketMQBatchWriter(parse_sink_options(self.options), schema)

    def streamWriter(self, schema: StructType, overwrite: bool) -> DataSourceStreamWriter:
        # overwrite = the "complete" output mode: like Spark's Kafka sink, every trigger appends the whole result
        # table to the topic. ("update" is refused by Spark itself for Python sinks.)
        from spark_connector.sink import RocketMQStreamWriter

        return RocketMQStreamWriter(parse_sink_options(self.options), schema)


def register(spark: SparkSession) -> None:
    """Make ``format("rocketmq")`` available in ``spark``."""
    spark.dataSource.register(RocketMQDataSource)
