"""The ``rocketmq`` sink: ``df.write`` and ``df.writeStream`` into RocketMQ topics, at least once.

Input columns (by name; the rest of the source schema — queueId, msgId, … — is ignored so a source DataFrame can
be written back as is; any other column is an error that names it):

============ ================================ ================================================================
column       type                             meaning
============ ================================ ================================================================
body         binary or string (required)      message body (strings are sent as UTF-8)
topic        string                           target topic; the ``topic`` option overrides it, one is required
keys         string or array<string>          RocketMQ KEYS (a string is used as is: space-separated keys)
tags         string                           RocketMQ TAGS
properties   map<string,string>               user properties
queueId      int                              pin the row to this queue of the topic (as Kafka's ``partition``);
                                              null or absent = the producer picks a queue per batch
brokerName   string                           with ``queueId``: the broker of that queue (default: the first
                                              broker of the topic that has it)
============ ================================ ================================================================

Rows are grouped per (topic, queue) into batches of at most ``sendBatchMaxMessages`` rows and
``sendBatchMaxBytes`` bytes, each sent as one SEND_BATCH_MESSAGE, with ``sendsInFlight`` batches on the wire at once
(a row bigger than a batch goes alone). Rows with no ``queueId``, ``properties`` or ``array<string>`` keys are
encoded column-wise (:mod:`spark_connector.sink_columns`), the others row by row here. Each task returns only after the broker acknowledged every batch (never
fire-and-forget), so a Spark batch commits only when all its rows are stored. A failed send fails the task, and so
the batch, with the broker's remark. A batch that fails after some rows were stored and is then retried sends them
again: this sink is at-least-once, like Spark's Kafka sink. Deduplicate downstream on a key column if needed.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import structlog
from pyspark.sql.datasource import DataSourceArrowWriter, DataSourceStreamArrowWriter, WriterCommitMessage
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    DataType,
    IntegerType,
    LongType,
    MapType,
    ShortType,
    StringType,
    StructType,
)

from spark_connector import _client
from spark_connector.options import OptionError, SinkOptions
from spark_connector.schema import SCHEMA
from spark_connector.sink_columns import EncodedBatch, columnar, encoded_batches

# structlog over stdlib logging: silent below WARNING unless the application configures logging (Spark workers).
log = structlog.wrap_logger(logging.getLogger(__name__))

_TYPES: dict[str, tuple[type[DataType], ...]] = {
    "body": (BinaryType, StringType),
    "topic": (StringType,),
    "keys": (StringType, ArrayType),
    "tags": (StringType,),
    "properties": (MapType,),
    "queueId": (IntegerType, LongType, ShortType),
    "brokerName": (StringType,),
}
_IGNORED = frozenset(SCHEMA.fieldNames()) - set(_TYPES)


@dataclass(frozen=True, slots=True)
class SinkColumns:
    """Where each sink column sits in the input rows (``None`` = absent), checked once against the input schema."""

    body: int
    topic: int | None
    keys: int | None
    tags: int | None
    properties: int | None
    queue_id: int | None = None
    broker: int | None = None
    keys_are_list: bool = False  # keys is array<string> (joined with spaces per row), not a string

    @classmethod
    def from_schema(cls, schema: StructType, opts: SinkOptions) -> SinkColumns:
        index: dict[str, int] = {}
        unknown: list[str] = []
        for i, f in enumerate(schema.fields):
            if f.name in _TYPES:
                if not isinstance(f.dataType, _TYPES[f.name]):
                    raise OptionError(
                        f"rocketmq sink: column '{f.name}' has type {f.dataType.simpleString()}, "
                        f"expected {' or '.join(t.typeName() for t in _TYPES[f.name])}"
                    )
                if (
                    f.name == "keys"
                    and isinstance(f.dataType, ArrayType)
                    and not isinstance(f.dataType.elementType, StringType)
                ):
                    raise OptionError("rocketmq sink: column 'keys' must be string or array<string>")
                if (
                    f.name == "properties"
                    and isinstance(f.dataType, MapType)
                    and not (
                        isinstance(f.dataType.keyType, StringType) and isinstance(f.dataType.valueType, StringType)
                    )
                ):
                    raise OptionError("rocketmq sink: column 'properties' must be map<string,string>")
                index[f.name] = i
            elif f.name not in _IGNORED:
                unknown.append(f.name)
        if unknown:
            raise OptionError(
                f"rocketmq sink: unexpected column(s) {', '.join(repr(u) for u in unknown)}; the sink "
                "takes body, topic, keys, tags, properties, queueId and brokerName"
            )
        if "body" not in index:
            raise OptionError("rocketmq sink: the input has no 'body' column (binary or string)")
        if "topic" not in index and opts.topic is None:
            raise OptionError("rocketmq sink: no target topic: add a 'topic' column or set the option 'topic'")
        return cls(
            body=index["body"],
            topic=None if opts.topic is not None else index.get("topic"),
            keys=index.get("keys"),
            tags=index.get("tags"),
            properties=index.get("properties"),
            queue_id=index.get("queueId"),
            broker=index.get("brokerName") if "queueId" in index else None,
            keys_are_list="keys" in index and isinstance(schema.fields[index["keys"]].dataType, ArrayType),
        )


class SinkCommitMessage(WriterCommitMessage):
    """What one task sent: row count and the number of distinct topics."""

    def __init__(self, rows: int, topics: tuple[str, ...]) -> None:
        self.rows = rows
        self.topics = topics


def _outgoing(
    data: Iterator[pa.RecordBatch], cols: SinkColumns, opts: SinkOptions
) -> Iterator[_client.OutgoingMessage]:
    """The rows of Spark's Arrow batches as messages: each column goes to Python whole, never row by row."""

    def column(rb: pa.RecordBatch, index: int | None, n: int) -> list[Any]:
        return [None] * n if index is None else rb.column(index).to_pylist()

    seen = 0
    for rb in data:
        n = rb.num_rows
        bodies = column(rb, cols.body, n)
        topics = [opts.topic] * n if cols.topic is None else column(rb, cols.topic, n)
        tags, keys_l, props_l = column(rb, cols.tags, n), column(rb, cols.keys, n), column(rb, cols.properties, n)
        queue_ids, brokers = column(rb, cols.queue_id, n), column(rb, cols.broker, n)
        for i in range(n):
            topic, body, keys, props, queue_id = topics[i], bodies[i], keys_l[i], props_l[i], queue_ids[i]
            if not topic:
                raise ValueError(f"rocketmq sink: row {seen + i} of this task has no topic (null 'topic' column)")
            if body is None:
                raise ValueError(f"rocketmq sink: row {seen + i} of this task has a null 'body'")
            if isinstance(keys, list):
                keys = " ".join(k for k in keys if k)
            if queue_id is not None and queue_id < 0:
                raise ValueError(f"rocketmq sink: row {seen + i} of this task has a negative queueId {queue_id}")
            yield _client.OutgoingMessage(
                topic=topic,
                body=body.encode() if isinstance(body, str) else body,
                tags=tags[i],
                keys=keys or None,
                properties=dict(props) if props else None,
                queue_id=queue_id,
                broker=None if queue_id is None else brokers[i],
            )
        seen += n


def batches(messages: Iterator[_client.OutgoingMessage], opts: SinkOptions) -> Iterator[list[_client.OutgoingMessage]]:
    """Group messages per (topic, queue pin) into send batches bounded by count and bytes, in arrival order per
    group; a message larger than ``sendBatchMaxBytes`` forms a batch of its own."""
    open_: dict[tuple[str, str | None, int | None], tuple[list[_client.OutgoingMessage], int]] = {}
    max_n, max_bytes = opts.send_batch_max_messages, opts.send_batch_max_bytes
    for m in messages:
        key = (m.topic, m.broker, m.queue_id)
        size = len(m.body) + 64 + (len(m.keys) if m.keys else 0) + (len(m.tags) if m.tags else 0)
        if m.properties:
            size += sum(len(k) + len(v) + 2 for k, v in m.properties.items())
        batch, used = open_.get(key, ([], 0))
        if batch and (len(batch) >= max_n or used + size > max_bytes):
            yield batch
            batch, used = [], 0
        batch.append(m)
        open_[key] = (batch, used + size)
    for batch, _ in open_.values():
        if batch:
            yield batch


def write_rows(opts: SinkOptions, cols: SinkColumns, rows: Iterator[pa.RecordBatch]) -> SinkCommitMessage:
    """Send every row; return after the last acknowledgement. Runs on executors."""
    session = _client.producer_session(opts.namesrv_addrs, opts.producer_group, opts.send_timeout_ms, opts.security)
    topics: set[str] = set()
    if columnar(cols):

        def tracked_batches() -> Iterator[EncodedBatch]:
            for batch in encoded_batches(rows, cols, opts):
                topics.add(batch.topic)
                yield batch

        sent = session.send_encoded(tracked_batches(), opts.sends_in_flight)
        return SinkCommitMessage(sent, tuple(sorted(topics)))

    def tracked() -> Iterator[_client.OutgoingMessage]:
        for m in _outgoing(rows, cols, opts):
            topics.add(m.topic)
            yield m

    sent = session.send_batches(batches(tracked(), opts), opts.sends_in_flight)
    return SinkCommitMessage(sent, tuple(sorted(topics)))


def _total(messages: list[WriterCommitMessage | None]) -> int:
    return sum(m.rows for m in messages if isinstance(m, SinkCommitMessage))


class _RowWriter:
    """What the stream and the batch writer share: each task sends its rows through ``write_rows``."""

    def __init__(self, opts: SinkOptions, schema: StructType) -> None:
        self._opts = opts
        self._cols = SinkColumns.from_schema(schema, opts)

    @_client.cause_first
    def write(self, iterator: Iterator[pa.RecordBatch]) -> WriterCommitMessage:
        return write_rows(self._opts, self._cols, iterator)


class RocketMQStreamWriter(_RowWriter, DataSourceStreamArrowWriter):
    """``writeStream.format("rocketmq")``."""

    def commit(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        log.info("rocketmq.sink_commit", batch_id=batchId, rows=_total(messages))

    def abort(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        # Rows a failed batch already stored stay stored: the retry sends them again (at-least-once).
        log.warning("rocketmq.sink_abort", batch_id=batchId, rows_already_sent=_total(messages))


class RocketMQBatchWriter(_RowWriter, DataSourceArrowWriter):
    """``df.write.format("rocketmq")`` (append)."""

    def commit(self, messages: list[WriterCommitMessage | None]) -> None:
        log.info("rocketmq.sink_commit", rows=_total(messages))

    def abort(self, messages: list[WriterCommitMessage | None]) -> None:
        log.warning("rocketmq.sink_abort", rows_already_sent=_total(messages))
