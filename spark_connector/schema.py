"""The fixed read schema of the ``rocketmq`` source and the Arrow ``RecordBatch`` builder used by executors.

=============== ==================== ===========================================================================
column          type                 meaning
=============== ==================== ===========================================================================
topic           string               topic of the message
brokerName      string               broker that stores the queue
queueId         int                  queue id within the broker
queueOffset     bigint               offset of the message in its queue (the source's offsets count these)
msgId           string               the producer's unique id (UNIQ_KEY), else the broker's offset message id
keys            string               RocketMQ KEYS (space-separated), null when none
tags            string               RocketMQ TAGS, null when none
body            binary               message body
properties      map<string,string>   the other properties (user and system), only with includeProperties=true
bornTimestamp   timestamp            when the producer created the message
storeTimestamp  timestamp            when the broker stored it
bornHost        string               producer address ``ip:port``
reconsumeTimes  int                  delivery attempts so far (retry topics)
=============== ==================== ===========================================================================

Executors yield ``pyarrow.RecordBatch``es (no per-row conversion in Spark's worker); Spark checks the first batch
against ``to_arrow_schema(schema)``, which :data:`ARROW_SCHEMA` equals (a unit test holds it to that).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pyarrow as pa
from pyspark.sql.types import (
    BinaryType,
    IntegerType,
    LongType,
    MapType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

SCHEMA = StructType(
    [
        StructField("topic", StringType()),
        StructField("brokerName", StringType()),
        StructField("queueId", IntegerType()),
        StructField("queueOffset", LongType()),
        StructField("msgId", StringType()),
        StructField("keys", StringType()),
        StructField("tags", StringType()),
        StructField("body", BinaryType()),
        StructField("properties", MapType(StringType(), StringType())),
        StructField("bornTimestamp", TimestampType()),
        StructField("storeTimestamp", TimestampType()),
        StructField("bornHost", StringType()),
        StructField("reconsumeTimes", IntegerType()),
    ]
)

_TS = pa.timestamp("us", tz="UTC")
ARROW_SCHEMA = pa.schema(
    [
        ("topic", pa.string()),
        ("brokerName", pa.string()),
        ("queueId", pa.int32()),
        ("queueOffset", pa.int64()),
        ("msgId", pa.string()),
        ("keys", pa.string()),
        ("tags", pa.string()),
        ("body", pa.binary()),
        ("properties", pa.map_(pa.string(), pa.string())),
        ("bornTimestamp", _TS),
        ("storeTimestamp", _TS),
        ("bornHost", pa.string()),
        ("reconsumeTimes", pa.int32()),
    ]
)

# Properties broken out into columns, or that change from pull to pull (the Java client adds MIN/MAX_OFFSET), so
# that a replayed range yields the same rows.
BROKEN_OUT_PROPERTIES = frozenset({"KEYS", "TAGS", "MIN_OFFSET", "MAX_OFFSET"})


def read_schema(include_properties: bool = True) -> StructType:
    """The source's schema; without ``properties`` when ``includeProperties`` is false."""
    if include_properties:
        return SCHEMA
    return StructType([f for f in SCHEMA.fields if f.name != "properties"])


def arrow_schema(include_properties: bool = True) -> pa.Schema:
    if include_properties:
        return ARROW_SCHEMA
    return ARROW_SCHEMA.remove(ARROW_SCHEMA.get_field_index("properties"))


@dataclass(slots=True)
class BatchBuilder:
    """Column buffers for one RecordBatch; :meth:`add` one message at a time, :meth:`flush` when full."""

    include_properties: bool = True
    topic: list[str] = field(default_factory=list)
    broker: list[str] = field(default_factory=list)
    queue_id: list[int] = field(default_factory=list)
    queue_offset: list[int] = field(default_factory=list)
    msg_id: list[str | None] = field(default_factory=list)
    keys: list[str | None] = field(default_factory=list)
    tags: list[str | None] = field(default_factory=list)
    body: list[bytes] = field(default_factory=list)
    properties: list[list[tuple[str, str]]] = field(default_factory=list)
    born_ts: list[int] = field(default_factory=list)
    store_ts: list[int] = field(default_factory=list)
    born_host: list[str | None] = field(default_factory=list)
    reconsume: list[int] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.queue_offset)

    def add(
        self,
        *,
        topic: str,
        broker: str,
        queue_id: int,
        queue_offset: int,
        msg_id: str | None,
        body: bytes,
        properties: dict[str, str],
        born_timestamp_ms: int,
        store_timestamp_ms: int,
        born_host: str | None,
        reconsume_times: int,
    ) -> None:
        self.topic.append(topic)
        self.broker.append(broker)
        self.queue_id.append(queue_id)
        self.queue_offset.append(queue_offset)
        self.msg_id.append(msg_id)
        self.keys.append(properties.get("KEYS") or None)
        self.tags.append(properties.get("TAGS") or None)
        self.body.append(body)
        if self.include_properties:
            self.properties.append([(k, v) for k, v in properties.items() if k not in BROKEN_OUT_PROPERTIES])
        self.born_ts.append(born_timestamp_ms * 1000)
        self.store_ts.append(store_timestamp_ms * 1000)
        self.born_host.append(born_host)
        self.reconsume.append(reconsume_times)

    def flush(self) -> pa.RecordBatch:
        """The buffered rows as one RecordBatch; the buffers are emptied."""
        arrays = [
            pa.array(self.topic, pa.string()),
            pa.array(self.broker, pa.string()),
            pa.array(self.queue_id, pa.int32()),
            pa.array(self.queue_offset, pa.int64()),
            pa.array(self.msg_id, pa.string()),
            pa.array(self.keys, pa.string()),
            pa.array(self.tags, pa.string()),
            pa.array(self.body, pa.binary()),
        ]
        if self.include_properties:
            arrays.append(pa.array(self.properties, ARROW_SCHEMA.field("properties").type))
        arrays += [
            pa.array(self.born_ts, _TS),
            pa.array(self.store_ts, _TS),
            pa.array(self.born_host, pa.string()),
            pa.array(self.reconsume, pa.int32()),
        ]
        batch = pa.RecordBatch.from_arrays(arrays, schema=arrow_schema(self.include_properties))
        for buf in (
            self.topic,
            self.broker,
            self.queue_id,
            self.queue_offset,
            self.msg_id,
            self.keys,
            self.tags,
            self.body,
            self.properties,
            self.born_ts,
            self.store_ts,
            self.born_host,
            self.reconsume,
        ):
            buf.clear()
        return batch
