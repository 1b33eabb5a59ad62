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

Executors yield ``pyarrow.RecordBatch``es built column-wise by :func:`columns_to_batch` (no per-row conversion in
Spark's worker, no per-message object in ours); Spark checks the first batch against ``to_arrow_schema(schema)``,
which :data:`ARROW_SCHEMA` equals (a unit test holds it to that).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

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

if TYPE_CHECKING:
    import numpy as np

    from spark_connector.records import RecordArrays


def read_schema(include_properties: bool = True) -> StructType:
    """The source's schema; without ``properties`` when ``includeProperties`` is false."""
    if include_properties:
        return SCHEMA
    return StructType([f for f in SCHEMA.fields if f.name != "properties"])


def arrow_schema(include_properties: bool = True) -> pa.Schema:
    if include_properties:
        return ARROW_SCHEMA
    return ARROW_SCHEMA.remove(ARROW_SCHEMA.get_field_index("properties"))


def columns_to_batch(
    cols: RecordArrays,
    *,
    topic: str,
    broker: str,
    queue_id: int,
    include_properties: bool = True,
    tags_filter: frozenset[str] = frozenset(),
) -> pa.RecordBatch:
    """One RecordBatch of the source schema from decoded columns (:func:`spark_connector.records.decode_records`).

    The ``keys``/``tags``/``msgId`` columns and the ``properties`` map come from the raw properties texts in bulk
    (:func:`spark_connector.property_columns.columns`); nothing is done per message in Python. With a
    ``tags_filter`` (``subExpression``), rows whose TAGS are not in it are dropped (the broker filters by tag hash
    only, which can collide).
    """
    # Imported here: the driver's planning workers import this module for the schema alone.
    import numpy as np
    import pyarrow.compute as pc

    from spark_connector import property_columns

    n = len(cols)
    found = property_columns.columns(cols.properties, include_properties)
    tags, msg_id = found.tags, found.msg_id
    if msg_id.null_count:  # no producer id: the broker's offset message id, computed only for those rows
        missing = np.flatnonzero(msg_id.is_null().to_numpy(zero_copy_only=False))
        msg_id = pc.replace_with_mask(
            msg_id, msg_id.is_null(), pa.array([cols.offset_msg_id(int(i)) for i in missing], pa.string())
        )
    arrays: list[pa.Array] = [
        pa.repeat(pa.scalar(topic, pa.string()), n),
        pa.repeat(pa.scalar(broker, pa.string()), n),
        pa.repeat(pa.scalar(queue_id, pa.int32()), n),
        pa.array(cols.queue_offset, pa.int64()),
        msg_id,
        found.keys,
        tags,
        cols.body.cast(pa.binary()),
    ]
    if found.properties is not None:
        arrays.append(found.properties)
    arrays += [
        _ms_to_ts(cols.born_timestamp),
        _ms_to_ts(cols.store_timestamp),
        cols.born_host,
        pa.array(cols.reconsume_times, pa.int32()),
    ]
    batch = pa.RecordBatch.from_arrays(arrays, schema=arrow_schema(include_properties))
    if tags_filter:
        batch = batch.filter(pc.fill_null(pc.is_in(tags, value_set=pa.array(sorted(tags_filter))), False))
    return batch


def _ms_to_ts(ms: np.ndarray) -> pa.Array:
    return pa.array(ms * 1000, _TS)
