"""Executor side of the ``rocketmq`` source: read one planned queue range and yield Arrow record batches.

Runs inside Spark's Python workers. A task gets a :class:`RocketMQPartition` (pickled on the driver) and pulls
``[start, end)`` of one queue from its broker with the client's low-level ``pull(queue, offset, max_nums)``, in
``pullBatchSize`` steps. Messages are immutable once stored, so a range always yields the same rows: Spark can
replay a batch after a failure and get exactly what it got the first time.

Connections are opened here, never on the driver: the worker keeps one pull session per name-server list in a
module-level cache (:func:`spark_connector._client.pull_session`), reused by every task the worker runs.

Lost offsets — the range starts below the queue's min offset (retention deleted it), or the broker no longer has
offsets the driver saw (the queue was reset) — raise :class:`~spark_connector.planning.DataLossError` with
``failOnDataLoss=true``; otherwise they are skipped with a warning.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pyarrow as pa
import structlog
from pyspark.sql.datasource import InputPartition

from spark_connector import _client
from spark_connector.options import SourceOptions
from spark_connector.planning import DataLoss, DataLossError, QueueRange
from spark_connector.schema import BatchBuilder

# structlog over stdlib logging: silent below WARNING unless the application configures logging (Spark workers).
log = structlog.wrap_logger(logging.getLogger(__name__))

ROWS_PER_ARROW_BATCH = 4096


class RocketMQPartition(InputPartition):
    """One Spark task: a :class:`QueueRange` (one queue, offsets ``[start, end)``)."""

    def __init__(self, queue_range: QueueRange) -> None:
        super().__init__(queue_range)
        self.range = queue_range

    def __repr__(self) -> str:
        return f"RocketMQPartition({self.range})"


def _lost(opts: SourceOptions, r: QueueRange, start: int, end: int, reason: str) -> None:
    loss = DataLoss(r.key, start, end, reason)
    if opts.fail_on_data_loss:
        raise DataLossError([loss])
    log.warning("rocketmq.data_loss_skipped", loss=str(loss))


def read_range(opts: SourceOptions, r: QueueRange) -> Iterator[pa.RecordBatch]:
    """Yield the messages of ``r`` as RecordBatches of the source schema (see :mod:`spark_connector.schema`)."""
    if r.end <= r.start:
        return
    session = _client.pull_session(opts.namesrv_addrs, opts.poll_timeout_ms)
    builder = BatchBuilder(include_properties=opts.include_properties)
    queue = r.key
    offset = r.start
    while offset < r.end:
        pulled = session.pull(queue, offset, min(opts.pull_batch_size, r.end - offset))
        if pulled.status == "FOUND" and pulled.messages:
            first = pulled.messages[0].queue_offset
            if first > offset:
                _lost(opts, r, offset, min(first, r.end), f"are missing (the broker returned offset {first} next)")
            for m in pulled.messages:
                if m.queue_offset < offset:
                    continue
                if m.queue_offset >= r.end:
                    break
                builder.add(
                    topic=r.topic,
                    broker=r.broker,
                    queue_id=r.queue_id,
                    queue_offset=m.queue_offset,
                    msg_id=m.msg_id,
                    body=m.body,
                    properties=m.properties,
                    born_timestamp_ms=m.born_timestamp,
                    store_timestamp_ms=m.store_timestamp,
                    born_host=m.born_host,
                    reconsume_times=m.reconsume_times,
                )
                offset = m.queue_offset + 1
            offset = max(offset, min(pulled.next_begin_offset, r.end))
            if len(builder) >= ROWS_PER_ARROW_BATCH:
                yield builder.flush()
            continue
        # OFFSET_ILLEGAL / NO_NEW_MSG / NO_MATCHED_MSG (or FOUND with nothing): the offset is not readable.
        if offset < pulled.min_offset:
            nxt = min(pulled.min_offset, r.end)
            _lost(
                opts, r, offset, nxt, f"expired before they were read (the queue's min offset is {pulled.min_offset})"
            )
            offset = nxt
        elif pulled.next_begin_offset > offset:
            offset = min(pulled.next_begin_offset, r.end)
        else:
            _lost(
                opts,
                r,
                offset,
                r.end,
                f"are no longer on the broker (status {pulled.status}, max offset {pulled.max_offset})",
            )
            break
    if len(builder):
        yield builder.flush()
