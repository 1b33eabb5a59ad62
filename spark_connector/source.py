"""Driver side of the ``rocketmq`` source: the streaming reader (micro-batch planning) and the batch reader.

What runs where (PySpark 4.2+ Python Data Source API):

* :class:`RocketMQStreamReader` lives in one long-lived Python worker on the driver per query: ``initialOffset``,
  ``getDefaultReadLimit``, ``latestOffset``, ``reportLatestOffset``, ``partitions``, ``commit``,
  ``prepareForTriggerAvailableNow`` and ``stop``. It keeps a name-server/broker admin session for route look-ups and
  min/max offsets, created lazily and never pickled.
* ``read`` runs on executors; Spark pickles the reader object into every task, so the reader carries options only and
  delegates to :func:`spark_connector.reader.read_range`, imported there: the driver's worker is a fresh process per
  query, and the reader's modules (Arrow decoding, property columns) would only add to its start-up.

Offsets are :mod:`spark_connector.offsets` JSON; the planning rules are :mod:`spark_connector.planning`.

* The start is resolved once (``initialOffset`` is memoised; Spark persists it as the start of batch 0 when that
  batch is logged). Spark may call ``initialOffset`` again after a restart before batch 0 commits; a "latest" that
  moved meanwhile just yields an empty range (``start > end`` is empty).
* Every ``latestOffset`` refreshes the routes: new queues and, with ``subscribePattern``, new topics join at offset 0.
* Admission control: ``maxOffsetsPerTrigger`` → ``ReadMaxRows`` (exact cap, proportional split);
  ``minOffsetsPerTrigger``/``maxTriggerDelay`` are applied inside ``latestOffset`` (Spark has no composite limit for
  Python sources); ``Trigger.AvailableNow`` caps every queue at the max offset seen when the query started.
* ``commit(end)`` (which Spark calls one batch late) writes ``end`` to the broker for ``consumerGroup`` when set, so
  consumer-progress tools show the query's lag. Best effort; the checkpoint alone decides where a query resumes.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import structlog
from pyspark.sql.datasource import DataSourceReader, DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import (
    ReadAllAvailable,
    ReadLimit,
    ReadMaxRows,
    ReadMinRows,
    SupportsTriggerAvailableNow,
)

from spark_connector import _client
from spark_connector.offsets import JsonOffsets, OffsetMap, QueueKey, from_json_dict, to_json_dict
from spark_connector.options import SourceOptions
from spark_connector.partitions import RocketMQPartition
from spark_connector.planning import (
    DataLoss,
    DataLossError,
    QueueBounds,
    TriggerGate,
    backlog,
    cap_at,
    find_data_loss,
    next_end,
    plan_ranges,
    resolve_end,
    resolve_start,
)

if TYPE_CHECKING:
    import pyarrow as pa

T = TypeVar("T")

# structlog over stdlib logging: silent below WARNING unless the application configures logging (Spark workers).
log = structlog.wrap_logger(logging.getLogger(__name__))


class _DriverSide:
    """Route discovery and offset look-ups shared by the streaming and the batch reader (driver only)."""

    _opts: SourceOptions
    _admin: _client.AdminSession | None

    def __getstate__(self) -> dict[str, Any]:
        # Spark pickles the reader into every task: ship options and plain state, never the admin session.
        state = dict(self.__dict__)
        state["_admin"] = None
        return state

    def _session(self) -> _client.AdminSession:
        if self._admin is None:
            self._admin = _client.AdminSession(
                self._opts.namesrv_addrs, self._opts.poll_timeout_ms, self._opts.security
            )
        return self._admin

    def _retry(self, what: str, fn: Callable[[], T]) -> T:
        return _client.with_retries(what, self._opts.fetch_backoff_s, fn)

    def _queues(self) -> list[QueueKey]:
        admin = self._session()
        opts = self._opts
        if opts.subscribe_pattern is not None:
            topics = sorted(t for t in admin.topics() if opts.matches(t))
        elif opts.assigned:
            topics = sorted({t for t, _, _ in opts.assigned})
        else:
            topics = list(opts.subscribe)
        queues = [q for t in topics for q in admin.queues(t)]
        if opts.assigned:
            queues = [q for q in queues if opts.is_assigned(q.topic, q.broker, q.queue_id)]
        return queues

    def _bounds(self) -> dict[QueueKey, QueueBounds]:
        return self._retry("route and offset look-up", lambda: self._session().bounds(self._queues()))

    def _search_offset(self, queue: QueueKey, timestamp_ms: int) -> int:
        return self._retry("offset search by timestamp", lambda: self._session().search_offset(queue, timestamp_ms))

    def _bounds_of(self, expected: Iterable[QueueKey]) -> tuple[dict[QueueKey, QueueBounds], list[QueueKey]]:
        """The bounds, and which of ``expected`` the route no longer lists. A broker restart takes its queues out of
        the name server's route for a moment, so a missing queue is looked up again over the retry budget before it
        counts as deleted."""
        bounds = self._bounds()
        missing = sorted(q for q in expected if q not in bounds)
        for delay in self._opts.fetch_backoff_s:
            if not missing:
                break
            log.warning("rocketmq.queues_missing_from_route", queues=[str(q) for q in missing], retry_in_s=delay)
            time.sleep(delay)
            bounds = self._bounds()
            missing = sorted(q for q in expected if q not in bounds)
        return bounds, missing

    def _close(self) -> None:
        if self._admin is not None:
            admin, self._admin = self._admin, None
            admin.close()


class RocketMQStreamReader(_DriverSide, DataSourceStreamReader, SupportsTriggerAvailableNow):
    """``spark.readStream.format("rocketmq")``: micro-batches over RocketMQ queues."""

    def __init__(self, options: SourceOptions) -> None:
        self._opts = options
        self._admin = None
        self._initial: OffsetMap | None = None
        self._latest: OffsetMap | None = None
        self._target: OffsetMap | None = None
        self._committed: OffsetMap | None = None
        self._gate = (
            TriggerGate(options.min_offsets_per_trigger, options.trigger_delay_ms)
            if options.min_offsets_per_trigger is not None
            else None
        )
        self._clock = time.monotonic  # seconds; replaced in tests

    # -- offsets ---------------------------------------------------------------------------------------------------
    @_client.cause_first
    def initialOffset(self) -> JsonOffsets:
        if self._initial is None:
            bounds = self._bounds()
            self._initial = resolve_start(self._opts.start, bounds, self._search_offset)
            log.info("rocketmq.initial_offset", start=self._opts.start.kind, queues=len(self._initial))
        return to_json_dict(self._initial)

    def getDefaultReadLimit(self) -> ReadLimit:
        if self._opts.max_offsets_per_trigger is not None:
            return ReadMaxRows(self._opts.max_offsets_per_trigger)
        if self._opts.min_offsets_per_trigger is not None:
            return ReadMinRows(self._opts.min_offsets_per_trigger)
        return ReadAllAvailable()

    @_client.cause_first
    def latestOffset(self, start: dict[str, Any], limit: ReadLimit) -> JsonOffsets:
        begin = from_json_dict(start, what="checkpoint offset")
        # Spark asks for the next batch only once every batch up to ``start`` ran: that is what the group has
        # consumed (commit() alone would leave the last batch of a run uncommitted, so lag never reached 0).
        self._commit_group_offsets(begin)
        bounds, vanished = self._bounds_of(begin)
        latest = {q: b.max for q, b in bounds.items()}
        self._latest = latest
        resets: OffsetMap = {}
        losses = [
            DataLoss(
                q,
                begin[q],
                begin[q],
                "are unreadable: the queue is no longer in the name server's route (its topic was deleted, or its"
                " broker has been away for longer than the fetch retries)",
            )
            for q in vanished
        ]
        if vanished and not self._opts.fail_on_data_loss:
            begin = {q: v for q, v in begin.items() if q not in vanished}  # dropped, as Kafka drops deleted partitions
        losses += find_data_loss(begin, bounds)
        if losses:
            if self._opts.fail_on_data_loss:
                raise DataLossError(losses)
            for loss in losses:
                log.warning("rocketmq.data_loss_skipped", loss=str(loss))
                if loss.queue in bounds and loss.queue in begin and begin[loss.queue] > bounds[loss.queue].max:
                    resets[loss.queue] = bounds[loss.queue].max
        if self._target is not None:
            latest = cap_at(latest, self._target)
        max_rows = limit.max_rows if isinstance(limit, ReadMaxRows) else None
        gated = self._gate is not None and self._target is None and not isinstance(limit, ReadAllAvailable)
        if gated and self._gate is not None and not self._gate.admit(backlog(begin, latest), self._clock() * 1000):
            return to_json_dict({**begin, **resets})
        end = next_end(begin, latest, max_rows)
        end.update(resets)
        return to_json_dict(end)

    def reportLatestOffset(self) -> JsonOffsets | None:
        return None if self._latest is None else to_json_dict(self._latest)

    def prepareForTriggerAvailableNow(self) -> None:
        self._target = {q: b.max for q, b in self._bounds().items()}
        log.info("rocketmq.available_now", target=to_json_dict(self._target))

    # -- planning and reading --------------------------------------------------------------------------------------
    @_client.cause_first
    def partitions(self, start: dict[str, Any], end: dict[str, Any]) -> Sequence[InputPartition]:
        ranges = plan_ranges(
            from_json_dict(start, what="checkpoint offset"),
            from_json_dict(end, what="checkpoint offset"),
            max_records=self._opts.max_records_per_partition,
            min_partitions=self._opts.min_partitions,
        )
        return [RocketMQPartition(r) for r in ranges]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        return _read(self._opts, partition)

    def commit(self, end: dict[str, Any]) -> None:
        self._commit_group_offsets(from_json_dict(end, what="checkpoint offset"))

    def _commit_group_offsets(self, offsets: OffsetMap) -> None:
        group = self._opts.consumer_group
        if group is None or not offsets or offsets == self._committed:
            return
        try:
            self._session().commit_offsets(group, offsets)
            self._committed = dict(offsets)
        except Exception as exc:  # best effort: lag reporting must never fail the query
            log.warning("rocketmq.commit_offsets_failed", group=group, error=str(exc))

    def stop(self) -> None:
        self._close()


class RocketMQBatchReader(_DriverSide, DataSourceReader):
    """``spark.read.format("rocketmq")``: the messages between ``startingOffsets`` and ``endingOffsets``."""

    def __init__(self, options: SourceOptions) -> None:
        self._opts = options
        self._admin = None

    @_client.cause_first
    def partitions(self) -> list[InputPartition]:
        try:
            bounds = self._bounds()
            start = resolve_start(self._opts.start, bounds, self._search_offset)
            end = resolve_end(self._opts.end, bounds, self._search_offset)
            losses = [d for d in find_data_loss(start, bounds) if d.queue in start]
        finally:
            self._close()
        if losses and self._opts.fail_on_data_loss:
            raise DataLossError(losses)
        ranges = plan_ranges(
            start, end, max_records=self._opts.max_records_per_partition, min_partitions=self._opts.min_partitions
        )
        log.info("rocketmq.batch_plan", ranges=len(ranges), rows=sum(r.size for r in ranges))
        return [RocketMQPartition(r) for r in ranges]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        return _read(self._opts, partition)


def _read(opts: SourceOptions, partition: InputPartition) -> Iterator[pa.RecordBatch]:
    """An executor's task. The reader (Arrow, numpy, the pull client) is imported here, not with this module: the
    driver's planning worker imports this module once per query and never reads."""
    if not isinstance(partition, RocketMQPartition):  # Spark's placeholder when there was nothing to plan
        return iter(())
    from spark_connector.reader import read_range

    return read_range(opts, partition.range)
