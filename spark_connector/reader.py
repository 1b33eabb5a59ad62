"""Executor side of the ``rocketmq`` source: read one planned queue range and yield Arrow record batches.

Runs inside Spark's Python workers. A task gets a :class:`~spark_connector.partitions.RocketMQPartition` (pickled on the driver) and reads
``[start, end)`` of one queue. The range is cut into windows of ``pullBatchSize`` offsets and ``pullsInFlight``
windows are pulled at once (:class:`spark_connector._client.PullSession`, whose loop this thread runs while it waits
for a window), so the broker round trips overlap each other and the Arrow building here. Replies stay undecoded
until this thread turns them into columns (:func:`spark_connector.records.decode_records`: numpy/Arrow gathers,
nothing per message) and a RecordBatch (:func:`spark_connector.schema.columns_to_batch`).
Messages are immutable once stored, so a range always yields the same rows: Spark can replay a batch after a
failure and get exactly what it got the first time.

Connections are opened here, never on the driver: the worker keeps one pull session per name-server list in a
module-level cache (:func:`spark_connector._client.pull_session`), reused by every task the worker runs. A failed pull
is retried with backoff (``fetchRetries``, ``fetchRetryBackoffMs``) before the task fails.

Lost offsets — the range starts below the queue's min offset (retention deleted it), or the broker no longer has
offsets the driver saw (the queue was reset or the topic deleted) — raise
:class:`~spark_connector.planning.DataLossError` with ``failOnDataLoss=true``; otherwise they are skipped with a
warning.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pyarrow as pa
import structlog

from spark_connector import _client
from spark_connector.options import SourceOptions
from spark_connector.planning import DataLoss, DataLossError, QueueRange
from spark_connector.records import RecordArrays, concat, decode_records
from spark_connector.schema import columns_to_batch

if TYPE_CHECKING:
    from client.bulk import RawPullResult

# structlog over stdlib logging: silent below WARNING unless the application configures logging (Spark workers).
log = structlog.wrap_logger(logging.getLogger(__name__))

ROWS_PER_ARROW_BATCH = 8192


def _lost(opts: SourceOptions, r: QueueRange, start: int, end: int, reason: str) -> None:
    loss = DataLoss(r.key, start, end, reason)
    if opts.fail_on_data_loss:
        raise DataLossError([loss])
    log.warning("rocketmq.data_loss_skipped", loss=str(loss))


def apply_window(
    opts: SourceOptions, r: QueueRange, start: int, end: int, replies: list[RawPullResult], cols: list[RecordArrays]
) -> int:
    """Decode the replies of the window ``[start, end)`` and append them to ``cols``; return the offset reached.

    Below ``end`` means the replies stopped early: the caller pulls again from there. Offsets the broker no longer
    has are reported through :func:`_lost` (raise, or warn and skip).
    """
    filtered = opts.sub_expression != "*"
    offset = start
    for res in replies:
        if res.status.name == "FOUND" and res.records:
            got = decode_records(res.records, min_offset=offset, end_offset=end)
            if len(got):
                cols.append(got)
                first = int(got.queue_offset[0])
                if first > offset and not filtered:
                    _lost(opts, r, offset, first, f"are missing (the broker returned offset {first} next)")
                offset = int(got.queue_offset[-1]) + 1
            offset = max(offset, min(res.next_begin_offset, end))
            continue
        # OFFSET_ILLEGAL / NO_NEW_MSG / NO_MATCHED_MSG (or FOUND with nothing): the offset is not readable.
        if offset < res.min_offset:
            nxt = min(res.min_offset, end)
            _lost(opts, r, offset, nxt, f"expired before they were read (the queue's min offset is {res.min_offset})")
            offset = nxt
        elif res.next_begin_offset > offset:
            offset = min(res.next_begin_offset, end)
        else:
            _lost(
                opts,
                r,
                offset,
                r.end,
                f"are no longer on the broker (status {res.status.name}, max offset {res.max_offset})",
            )
            return r.end
    return offset


def read_range(opts: SourceOptions, r: QueueRange) -> Iterator[pa.RecordBatch]:
    """Yield the messages of ``r`` as RecordBatches of the source schema (see :mod:`spark_connector.schema`)."""
    if r.end <= r.start:
        return
    session = _client.pull_session(opts.namesrv_addrs, opts.poll_timeout_ms, opts.security)
    size, expression, backoff = opts.pull_batch_size, opts.sub_expression, opts.fetch_backoff_s
    windows = iter(range(r.start, r.end, size))
    pending: deque[tuple[int, int, _client.PendingWindow]] = deque()

    def submit() -> None:
        for a in windows:
            b = min(a + size, r.end)
            pending.append((a, b, session.window(r.key, a, b, size, expression, backoff)))
            return

    def batch(parts: list[RecordArrays]) -> pa.RecordBatch:
        return columns_to_batch(
            concat(parts),
            topic=r.topic,
            broker=r.broker,
            queue_id=r.queue_id,
            include_properties=opts.include_properties,
            tags_filter=frozenset(t.strip() for t in expression.split("||")) if expression != "*" else frozenset(),
        )

    for _ in range(opts.pulls_in_flight):
        submit()
    cols: list[RecordArrays] = []
    try:
        while pending:
            a, b, fut = pending.popleft()
            replies = fut.result()
            submit()
            offset = apply_window(opts, r, a, b, replies, cols)
            while offset < b:  # the replies stopped early (skipped offsets): pull the rest of the window now
                replies = session.window(r.key, offset, b, size, expression, backoff).result()
                reached = apply_window(opts, r, offset, b, replies, cols)
                if reached <= offset:
                    _lost(opts, r, offset, b, "could not be read (the broker returned nothing for them)")
                    break
                offset = reached
            if sum(len(c) for c in cols) >= ROWS_PER_ARROW_BATCH:
                yield batch(cols)
                cols = []
        if cols:
            yield batch(cols)
    finally:
        for _, _, fut in pending:
            fut.cancel()
