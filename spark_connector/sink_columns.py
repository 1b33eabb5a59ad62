"""The sink's columnar path: Spark's Arrow batches to send batches of ``(body, properties text)``, column by column.

Used when no row is pinned to a queue and the properties come from ``tags`` and string ``keys`` only (no
``properties`` map, no ``array<string>`` keys, no ``queueId``): the common shape, and the one without per-row
choices. Each message's properties text (RocketMQ's ``name\\x01value\\x02``: TAGS, KEYS, WAIT; the producer adds
UNIQ_KEY, ``client.bulk.send_batch_texts``) is built for the whole Arrow batch with Arrow string kernels; Python then
only cuts the rows into batches of at most ``sendBatchMaxMessages`` rows and ``sendBatchMaxBytes`` bytes per topic,
with the same size estimate as :func:`spark_connector.sink.batches`. Other inputs take the row path in
:mod:`spark_connector.sink`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from spark_connector.options import SinkOptions

if TYPE_CHECKING:
    from spark_connector.sink import SinkColumns

_WAIT = "WAIT\x01true\x02"
_OVERHEAD = 64  # bytes counted per message on top of body and properties, as the row path does

SendBatch = tuple[str, list[tuple[bytes, str]]]


def columnar(cols: SinkColumns) -> bool:
    """Whether rows of these columns can take the columnar path."""
    return cols.queue_id is None and cols.properties is None and not cols.keys_are_list


def _first_null(arr: pa.Array) -> int:
    return int(np.flatnonzero(arr.is_null().to_numpy(zero_copy_only=False))[0])


def _property(name: str, arr: pa.Array) -> pa.Array:
    """``name\\x01value\\x02`` where the value is set and not empty, else ``""``."""
    present = pc.fill_null(pc.not_equal(arr, ""), False)
    return pc.if_else(present, pc.binary_join_element_wise(f"{name}\x01", arr, "\x02", ""), "")


def _cut(
    topic: str, bodies: list[bytes], texts: list[str], sizes: np.ndarray, opts: SinkOptions
) -> Iterator[SendBatch]:
    max_n, max_bytes = opts.send_batch_max_messages, opts.send_batch_max_bytes
    items: list[tuple[bytes, str]] = []
    used = 0
    for body, text, size in zip(bodies, texts, sizes.tolist(), strict=True):
        if items and (len(items) >= max_n or used + size > max_bytes):
            yield topic, items
            items, used = [], 0
        items.append((body, text))
        used += size
    if items:
        yield topic, items


def text_batches(data: Iterator[pa.RecordBatch], cols: SinkColumns, opts: SinkOptions) -> Iterator[SendBatch]:
    """The send batches of Spark's Arrow batches (rows in order per topic); raises ``ValueError`` naming the row for
    a null body or a missing topic."""
    seen = 0
    for rb in data:
        n = rb.num_rows
        if n == 0:
            continue
        body = rb.column(cols.body)
        if body.null_count:
            raise ValueError(f"rocketmq sink: row {seen + _first_null(body)} of this task has a null 'body'")
        if not pa.types.is_binary(body.type):
            body = body.cast(pa.binary())
        pieces = [_property("TAGS", rb.column(cols.tags))] if cols.tags is not None else []
        if cols.keys is not None:
            pieces.append(_property("KEYS", rb.column(cols.keys)))
        texts = pc.binary_join_element_wise(*pieces, _WAIT, "") if pieces else pa.repeat(pa.scalar(_WAIT), n)
        sizes = (
            pc.binary_length(body).to_numpy(zero_copy_only=False).astype(np.int64)
            + pc.binary_length(texts).to_numpy(zero_copy_only=False)
            + _OVERHEAD
        )
        if cols.topic is None:
            assert opts.topic is not None
            yield from _cut(opts.topic, body.to_pylist(), texts.to_pylist(), sizes, opts)
        else:
            topics = rb.column(cols.topic)
            missing = pc.fill_null(pc.equal(topics, ""), True)
            if pc.any(missing).as_py():
                row = int(np.flatnonzero(missing.to_numpy(zero_copy_only=False))[0])
                raise ValueError(f"rocketmq sink: row {seen + row} of this task has no topic (null 'topic' column)")
            encoded = topics.dictionary_encode()
            codes = encoded.indices.to_numpy(zero_copy_only=False)
            for code, topic in enumerate(encoded.dictionary.to_pylist()):
                rows = np.flatnonzero(codes == code)
                take = pa.array(rows)
                yield from _cut(
                    str(topic), body.take(take).to_pylist(), texts.take(take).to_pylist(), sizes[rows], opts
                )
        seen += n
