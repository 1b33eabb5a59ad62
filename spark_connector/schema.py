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

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
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
_BROKEN_OUT = pa.array(sorted(BROKEN_OUT_PROPERTIES), pa.string())
# RocketMQ's properties text: name\x01value\x02 ... (client.bulk re-exports protocol's constants; kept here as
# literals so this module imports without the client).
NAME_VALUE_SEPARATOR = "\x01"
PROPERTY_SEPARATOR = "\x02"

if TYPE_CHECKING:
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


def _scatter(n: int, parents: np.ndarray, values: pa.Array) -> pa.Array:
    """A string array of ``n`` rows: row ``parents[i]`` gets ``values[i]`` (the last one wins), the others null."""
    idx = np.full(n, -1, dtype=np.int64)
    idx[parents] = np.arange(len(parents), dtype=np.int64)
    return pc.take(values, pa.array(idx, mask=idx < 0))


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

    Properties are split in bulk with Arrow kernels: ``name\x01value\x02`` pieces → (row, name, value) triples →
    the ``keys``/``tags`` columns and the ``properties`` map; nothing is done per message in Python. With a
    ``tags_filter`` (``subExpression``), rows whose TAGS are not in it are dropped (the broker filters by tag hash
    only, which can collide).
    """
    n = len(cols)
    props = cols.properties.cast(pa.string())
    pieces_list = pc.split_pattern(props, PROPERTY_SEPARATOR)
    parents = pc.list_parent_indices(pieces_list)
    pieces = pc.list_flatten(pieces_list)
    has_sep = pc.match_substring(pieces, NAME_VALUE_SEPARATOR)
    parents, pieces = parents.filter(has_sep), pieces.filter(has_sep)
    kv = pc.split_pattern(pieces, NAME_VALUE_SEPARATOR, max_splits=1)
    names, values = pc.list_element(kv, 0), pc.list_element(kv, 1)
    parents_np = parents.to_numpy(zero_copy_only=False)

    set_values = pc.if_else(pc.equal(values, ""), pa.scalar(None, pa.string()), values)  # "" reads as null

    def column(name: str) -> pa.Array:
        mask = pc.equal(names, name)
        return _scatter(n, parents_np[mask.to_numpy(zero_copy_only=False)], set_values.filter(mask))

    tags = column("TAGS")
    msg_id = column("UNIQ_KEY")
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
        column("KEYS"),
        tags,
        cols.body.cast(pa.binary()),
    ]
    if include_properties:
        keep = pc.invert(pc.is_in(names, value_set=_BROKEN_OUT))
        kept_parents = parents_np[keep.to_numpy(zero_copy_only=False)]
        offsets = np.zeros(n + 1, dtype=np.int32)
        np.cumsum(np.bincount(kept_parents, minlength=n), out=offsets[1:])
        arrays.append(pa.MapArray.from_arrays(pa.array(offsets), names.filter(keep), values.filter(keep)))
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
