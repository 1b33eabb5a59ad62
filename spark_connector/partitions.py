"""The task description the driver plans and Spark pickles to an executor: :class:`RocketMQPartition`.

Kept apart from :mod:`spark_connector.reader` (Arrow decoding, pulls) so that the driver's planning worker, which
builds partitions but never reads one, does not import the executor's modules.
"""

from __future__ import annotations

from pyspark.sql.datasource import InputPartition

from spark_connector.planning import QueueRange


class RocketMQPartition(InputPartition):
    """One Spark task: a :class:`QueueRange` (one queue, offsets ``[start, end)``)."""

    def __init__(self, queue_range: QueueRange) -> None:
        super().__init__(queue_range)
        self.range = queue_range

    def __repr__(self) -> str:
        return f"RocketMQPartition({self.range})"
