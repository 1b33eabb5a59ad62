"""The sink's columnar path: Spark's Arrow batches straight to SEND_BATCH_MESSAGE bodies, with no Python object per row.

Used when no row is pinned to a queue and the properties come from ``tags`` and string ``keys`` only (no
``properties`` map, no ``array<string>`` keys, no ``queueId``): the common shape, and the one without per-row
choices. For each Arrow batch (per topic when a ``topic`` column varies):

1. each row's properties text (RocketMQ's ``name\\x01value\\x02``) is built with Arrow string kernels: TAGS, KEYS,
   ``WAIT\\x01true\\x02``, then ``UNIQ_KEY\\x01<id>\\x02`` with ids from one block of this process's ids
   (``client.bulk.uniq_id_block``) written as hex by numpy;
2. each row's batch entry (``client.bulk.BATCH_HEAD_FIELDS``: the fixed head, the body, the properties length and
   text) is one element of a binary array joined by Arrow (``binary_join_element_wise``): heads and lengths are
   fixed-width columns made by numpy, so the body bytes are copied once, by Arrow, and never become ``bytes``;
3. the rows are cut into send batches of at most ``sendBatchMaxMessages`` rows and ``sendBatchMaxBytes`` bytes (the
   same size estimate as :func:`spark_connector.sink.batches`: body + properties without the id + 64), found with
   a binary search on the running size, per batch not per row; each send batch's body is then one contiguous slice
   of the joined entries.

A send batch of one row goes as a plain send (SEND_MESSAGE_V2: ACL 1.0 checks it as J 4.x does) with its body and
text. Other inputs take the row path in :mod:`spark_connector.sink`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from client.bulk import BATCH_HEAD_FIELDS, BATCH_HEAD_SIZE, BATCH_PROPS_LEN, UNIQ_PROPERTY, uniq_id_block
from spark_connector.options import SinkOptions

if TYPE_CHECKING:
    from spark_connector.sink import SinkColumns

_WAIT = "WAIT\x01true\x02"
_OVERHEAD = 64  # bytes counted per message on top of body and properties, as the row path does
_ID_HEAD = 28  # hex chars shared by a block's ids (uniq_id_block); each id adds 4 of its own
_ID_TAIL = len(UNIQ_PROPERTY) + _ID_HEAD + 4 + 1  # UNIQ_KEY\x01 <32 hex> \x02
_MAX_PROPS = 32_767  # PROPSLEN is an int16
_HEX = np.frombuffer(b"0123456789ABCDEF", np.uint8)
_NIBBLES = np.array([12, 8, 4, 0], np.int64)
_HEAD_DTYPE = np.dtype(
    {
        "names": list(BATCH_HEAD_FIELDS),
        "formats": [dtype for _, dtype in BATCH_HEAD_FIELDS.values()],
        "offsets": [offset for offset, _ in BATCH_HEAD_FIELDS.values()],
        "itemsize": BATCH_HEAD_SIZE,
    }
)


@dataclass(frozen=True, slots=True)
class EncodedBatch:
    """One send: ``count`` rows for ``topic``. Two or more rows: ``payload`` is the SEND_BATCH_MESSAGE body and
    ``msg_ids`` their ids, comma-separated. One row: ``single`` is its body and properties text (no id: the plain
    send gives it one) and ``payload`` is empty."""

    topic: str
    count: int
    payload: bytes = b""
    msg_ids: str = ""
    single: tuple[bytes, str] | None = None


def columnar(cols: SinkColumns) -> bool:
    """Whether rows of these columns can take the columnar path."""
    return cols.queue_id is None and cols.properties is None and not cols.keys_are_list


def _first(mask: pa.Array) -> int:
    return int(np.flatnonzero(mask.to_numpy(zero_copy_only=False))[0])


def _property(name: str, arr: pa.Array) -> pa.Array:
    """``name\\x01value\\x02`` where the value is set and not empty, else ``""``."""
    present = pc.fill_null(pc.not_equal(arr, ""), False)
    return pc.if_else(present, pc.binary_join_element_wise(f"{name}\x01", arr, "\x02", ""), "")


def _fixed(rows: np.ndarray) -> pa.Array:
    """An ``n x w`` uint8 matrix as a large_binary array of ``n`` values of ``w`` bytes (no copy)."""
    n, width = rows.shape
    offsets = np.arange(0, (n + 1) * width, width, dtype=np.int64)
    data = np.ascontiguousarray(rows)
    return pa.Array.from_buffers(pa.large_binary(), n, [None, pa.py_buffer(offsets), pa.py_buffer(data)])


def _ids(n: int) -> np.ndarray:
    """``n`` fresh message ids as an ``n x 32`` matrix of hex characters."""
    head, first = uniq_id_block(n)
    ids = np.empty((n, _ID_HEAD + 4), np.uint8)
    ids[:, :_ID_HEAD] = np.frombuffer(head.encode(), np.uint8)
    counters = (first + np.arange(n, dtype=np.int64)) & 0xFFFF
    ids[:, _ID_HEAD:] = _HEX[(counters[:, None] >> _NIBBLES) & 0xF]
    return ids


def _entries(body: pa.Array, texts: pa.Array | None, ids: np.ndarray) -> tuple[pa.Array, np.ndarray]:
    """The batch entries of the rows (one large_binary value each) and where each starts in the joined data
    (``n + 1`` offsets). ``texts`` are the properties before ``WAIT`` (TAGS, KEYS), ``None`` when there are none."""
    n = len(body)
    blen = pc.binary_length(body).to_numpy(zero_copy_only=False).astype(np.int64)
    tail = np.empty((n, len(_WAIT) + _ID_TAIL), np.uint8)
    tail[:, : len(_WAIT) + len(UNIQ_PROPERTY)] = np.frombuffer((_WAIT + UNIQ_PROPERTY).encode(), np.uint8)
    tail[:, len(_WAIT) + len(UNIQ_PROPERTY) : -1] = ids
    tail[:, -1] = 2  # PROPERTY_SEPARATOR
    plen = np.full(n, tail.shape[1], np.int64)
    if texts is not None:
        plen += pc.binary_length(texts).to_numpy(zero_copy_only=False)
    too_long = np.flatnonzero(plen > _MAX_PROPS)
    if len(too_long):
        raise ValueError(
            f"rocketmq sink: the properties of row {int(too_long[0])} of this batch are {int(plen[too_long[0]])} "
            f"bytes long; RocketMQ allows {_MAX_PROPS}"
        )
    heads = np.zeros(n, _HEAD_DTYPE)
    heads["total_size"] = BATCH_HEAD_SIZE + blen + 2 + plen
    heads["body_length"] = blen
    pieces = [
        _fixed(heads.view(np.uint8).reshape(n, BATCH_HEAD_SIZE)),
        body.cast(pa.large_binary()),
        _fixed(plen.astype(BATCH_PROPS_LEN).view(np.uint8).reshape(n, 2)),
    ]
    if texts is not None:
        pieces.append(texts.cast(pa.large_binary()))
    pieces.append(_fixed(tail))
    joined = pc.binary_join_element_wise(*pieces, pa.scalar(b"", pa.large_binary()))
    offsets = np.frombuffer(joined.buffers()[1], np.int64, n + 1)
    return joined, offsets


def _cut(sizes: np.ndarray, opts: SinkOptions) -> Iterator[tuple[int, int]]:
    """Row ranges ``[i, j)`` of send batches: greedy in row order, at most ``sendBatchMaxMessages`` rows and
    ``sendBatchMaxBytes`` estimated bytes each (a row bigger than that alone)."""
    max_n, max_bytes = opts.send_batch_max_messages, opts.send_batch_max_bytes
    running = np.zeros(len(sizes) + 1, np.int64)
    np.cumsum(sizes, out=running[1:])
    i, n = 0, len(sizes)
    while i < n:
        fits = int(np.searchsorted(running, running[i] + max_bytes, side="right")) - 1
        j = max(i + 1, min(fits, i + max_n, n))
        yield i, j
        i = j


def _group(topic: str, body: pa.Array, texts: pa.Array | None, opts: SinkOptions) -> Iterator[EncodedBatch]:
    """The send batches of rows bound for ``topic``, in row order."""
    n = len(body)
    ids = _ids(n)
    joined, offsets = _entries(body, texts, ids)
    data = joined.buffers()[2]
    text_len = len(_WAIT) + (pc.binary_length(texts).to_numpy(zero_copy_only=False) if texts is not None else 0)
    sizes = pc.binary_length(body).to_numpy(zero_copy_only=False).astype(np.int64) + text_len + _OVERHEAD
    listed = np.empty((n, ids.shape[1] + 1), np.uint8)  # each id and a comma, for the results' msg_id
    listed[:, :-1] = ids
    listed[:, -1] = ord(",")
    id_text = listed.tobytes()
    width = listed.shape[1]
    for i, j in _cut(sizes, opts):
        if j - i == 1:
            text = (texts[i].as_py().decode() if texts is not None else "") + _WAIT
            yield EncodedBatch(topic, 1, single=(body[i].as_py(), text))
        else:
            payload = data[int(offsets[i]) : int(offsets[j])].to_pybytes()
            yield EncodedBatch(topic, j - i, payload, id_text[i * width : j * width - 1].decode())


def encoded_batches(data: Iterator[pa.RecordBatch], cols: SinkColumns, opts: SinkOptions) -> Iterator[EncodedBatch]:
    """The sends of Spark's Arrow batches (rows in order per topic); raises ``ValueError`` naming the row for a
    null or empty body, a missing topic, or properties over RocketMQ's limit."""
    seen = 0
    for rb in data:
        n = rb.num_rows
        if n == 0:
            continue
        body = rb.column(cols.body)
        if body.null_count:
            raise ValueError(f"rocketmq sink: row {seen + _first(body.is_null())} of this task has a null 'body'")
        if not pa.types.is_binary(body.type):
            body = body.cast(pa.binary())
        empty = pc.equal(pc.binary_length(body), 0)
        if pc.any(empty).as_py():
            raise ValueError(f"rocketmq sink: row {seen + _first(empty)} of this task has an empty 'body'")
        pieces = [_property("TAGS", rb.column(cols.tags))] if cols.tags is not None else []
        if cols.keys is not None:
            pieces.append(_property("KEYS", rb.column(cols.keys)))
        texts = pc.binary_join_element_wise(*pieces, "").cast(pa.binary()) if pieces else None
        if cols.topic is None:
            assert opts.topic is not None
            yield from _group(opts.topic, body, texts, opts)
        else:
            topics = rb.column(cols.topic)
            missing = pc.fill_null(pc.equal(topics, ""), True)
            if pc.any(missing).as_py():
                raise ValueError(
                    f"rocketmq sink: row {seen + _first(missing)} of this task has no topic (null 'topic' column)"
                )
            encoded = topics.dictionary_encode()
            names = encoded.dictionary.to_pylist()
            if len(names) == 1:
                yield from _group(str(names[0]), body, texts, opts)
            else:
                codes = encoded.indices.to_numpy(zero_copy_only=False)
                for code, topic in enumerate(names):
                    take = pa.array(np.flatnonzero(codes == code))
                    yield from _group(
                        str(topic), body.take(take), texts.take(take) if texts is not None else None, opts
                    )
        seen += n
