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
# The properties the columns read, looked up once per piece (pyarrow.compute.index_in); codes are indexes here.
_LOOKED_UP_NAMES = ("KEYS", "TAGS", "UNIQ_KEY", *sorted(BROKEN_OUT_PROPERTIES - {"KEYS", "TAGS"}))
_LOOKED_UP = pa.array(_LOOKED_UP_NAMES, pa.string())
_LOOKED_UP_CODE = {name: i for i, name in enumerate(_LOOKED_UP_NAMES)}
_BROKEN_OUT_CODES = np.array([_LOOKED_UP_CODE[name] for name in sorted(BROKEN_OUT_PROPERTIES)])
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


_NAME_VALUE = ord(NAME_VALUE_SEPARATOR)
_PROPERTY = ord(PROPERTY_SEPARATOR)


def split_properties(props: pa.Array) -> tuple[np.ndarray, pa.Array, pa.Array]:
    """Every ``name\x01value`` piece of every row's properties text, as (row index, name, value) arrays in row
    order: a row's text is split at each ``\x02`` (its last piece runs to the row's end), a piece without ``\x01``
    is dropped, and the name ends at the first ``\x01`` (the value may hold more).

    One pass of numpy over the text's bytes finds the separators; the pieces are then one string array over the
    text whose value boundaries are [gap, name, ``\x01``, value]* (no byte copied), and the names and the values
    are two ``take``s of it: no Python work per row or per piece."""
    text = props.cast(pa.string())  # UTF-8 checked once for the whole batch
    n = len(text)
    if n == 0:
        return np.zeros(0, np.int64), pa.array([], pa.string()), pa.array([], pa.string())
    _, offsets_buf, data_buf = text.buffers()
    offs = np.frombuffer(offsets_buf, np.int32, n + 1, text.offset * 4).astype(np.int64)
    lo, hi = int(offs[0]), int(offs[-1])
    raw = np.frombuffer(data_buf, np.uint8, hi - lo, lo) if hi > lo else np.zeros(0, np.uint8)
    pos2 = np.flatnonzero(raw == _PROPERTY) + lo
    pos1 = np.flatnonzero(raw == _NAME_VALUE) + lo
    count = np.diff(np.searchsorted(pos2, offs)) + 1  # pieces per row
    last = np.zeros(len(pos2) + n, np.bool_)  # each row's last piece ends at the row's end, the others at a \x02
    last[np.cumsum(count) - 1] = True
    ends = np.empty(len(last), np.int64)
    ends[last] = offs[1:]
    ends[~last] = pos2
    starts = np.empty(len(last), np.int64)
    starts[0] = lo
    starts[1:] = ends[:-1] + ~last[:-1]  # past the \x02, or the next row's start
    sep = np.append(pos1, hi)[np.searchsorted(pos1, starts)]  # each piece's first \x01 (if before its end)
    ok = sep < ends
    parents = np.repeat(np.arange(n), count)[ok]
    starts, ends, sep = starts[ok], ends[ok], sep[ok]
    m = len(starts)
    bounds = np.empty(4 * m + 2, np.int32)
    bounds[0], bounds[-1] = lo, hi
    bounds[1:-1:4], bounds[2:-1:4], bounds[3:-1:4], bounds[4:-1:4] = starts, sep, sep + 1, ends
    pieces = pa.StringArray.from_buffers(4 * m + 1, pa.py_buffer(bounds), data_buf)
    return parents, pieces.take(pa.array(np.arange(1, 4 * m, 4))), pieces.take(pa.array(np.arange(3, 4 * m, 4)))


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

    Properties are split in bulk (:func:`split_properties`): ``name\x01value\x02`` pieces → (row, name, value)
    triples → the ``keys``/``tags`` columns and the ``properties`` map; nothing is done per message in Python. With a
    ``tags_filter`` (``subExpression``), rows whose TAGS are not in it are dropped (the broker filters by tag hash
    only, which can collide).
    """
    n = len(cols)
    parents_np, names, values = split_properties(cols.properties)

    # one hash look-up per piece finds the names the columns need; the rest is numpy on its codes
    codes = pc.fill_null(pc.index_in(names, value_set=_LOOKED_UP), -1).to_numpy()
    value_offsets = np.frombuffer(values.buffers()[1], np.int32, len(values) + 1, values.offset * 4)
    empty = value_offsets[1:] == value_offsets[:-1]

    def column(name: str) -> pa.Array:
        """The value of property ``name`` per row ("" and absent read as null; the last one wins)."""
        hit = np.flatnonzero(codes == _LOOKED_UP_CODE[name])
        idx = np.full(n, -1, dtype=np.int64)
        idx[parents_np[hit]] = np.where(empty[hit], -1, hit)
        return values.take(pa.array(idx, mask=idx < 0))

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
        keep = ~np.isin(codes, _BROKEN_OUT_CODES)
        offsets = np.zeros(n + 1, dtype=np.int32)
        np.cumsum(np.bincount(parents_np[keep], minlength=n), out=offsets[1:])
        if keep.all():
            arrays.append(pa.MapArray.from_arrays(pa.array(offsets), names, values))
        else:
            kept = pa.array(keep)
            arrays.append(pa.MapArray.from_arrays(pa.array(offsets), names.filter(kept), values.filter(kept)))
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
