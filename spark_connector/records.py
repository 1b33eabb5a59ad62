"""PULL reply bodies to columns, gathered with numpy and Arrow: no Python work per message on the common path.

A PULL body is records back to back (the layout is ``protocol.record``'s table; ``client.bulk.V4_FIELDS`` gives the
fixed fields' byte offsets when both hosts are IPv4). When all records of a reply have one size (the usual case),
:func:`decode_records` lays an array of records of that size over the reply, so each fixed field of all records is a
strided numpy view and nothing is gathered; otherwise it walks the records (``client.bulk.v4_record_starts``, one
``struct`` read per record) and reads their fixed heads with one numpy gather. It then points at the bodies and the
properties in the reply with Arrow ``binary_view`` arrays built by numpy (no byte copied: the views keep the reply
alive). The bytes are copied once, when a RecordBatch of one or more replies is built (``cast`` to ``binary`` in
:func:`spark_connector.schema.columns_to_batch`). Records with IPv6 hosts or a compressed body (rare: the broker's
own address and the producers' decide the first, bodies over ``compressMsgBodyOverHowmuch`` the second) go through
``client.bulk.decode_columns`` and :meth:`RecordArrays.from_columns` instead: same columns, same values.

:class:`RecordArrays` are the decoded columns of one or more replies; :func:`spark_connector.schema.columns_to_batch`
turns them into a RecordBatch of the source schema.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from client.bulk import (
    MAGIC_V1,
    MAGIC_V2,
    V4_BODY,
    V4_FIELDS,
    V4_MIN_RECORD,
    V4_OTHER_LAYOUT,
    RecordColumns,
    decode_columns,
    v4_record_starts,
)


@dataclass(slots=True)
class RecordArrays:
    """Decoded fields of records, one array per field, in record order."""

    queue_offset: np.ndarray  # int64
    commit_log_offset: np.ndarray  # int64
    body: pa.Array  # binary_view (views into the replies; cast to binary once per RecordBatch)
    properties: pa.Array  # binary_view: raw "name\x01value\x02..." text
    born_timestamp: np.ndarray  # int64 epoch ms
    store_timestamp: np.ndarray  # int64 epoch ms
    born_host: pa.Array  # string "ip:port" ("[ipv6]:port")
    store_ip: pa.Array  # string, per row: for the offset message id of rows without UNIQ_KEY
    store_port: np.ndarray  # int32
    reconsume_times: np.ndarray  # int32

    def __len__(self) -> int:
        return len(self.queue_offset)

    @classmethod
    def empty(cls) -> RecordArrays:
        return cls.from_columns(RecordColumns())

    @classmethod
    def from_columns(cls, cols: RecordColumns) -> RecordArrays:
        """The same columns from ``client.bulk.decode_columns``' lists (the path for IPv6 hosts and compressed
        bodies)."""
        return cls(
            queue_offset=np.asarray(cols.queue_offset, np.int64),
            commit_log_offset=np.asarray(cols.commit_log_offset, np.int64),
            body=pa.array(cols.body, pa.binary()).cast(pa.binary_view()),
            properties=pa.array(cols.properties, pa.binary()).cast(pa.binary_view()),
            born_timestamp=np.asarray(cols.born_timestamp, np.int64),
            store_timestamp=np.asarray(cols.store_timestamp, np.int64),
            born_host=pa.array(cols.born_host, pa.string()),
            store_ip=pa.array([ip for ip, _ in cols.store_host], pa.string()),
            store_port=np.asarray([port for _, port in cols.store_host], np.int32),
            reconsume_times=np.asarray(cols.reconsume_times, np.int32),
        )

    def offset_msg_id(self, i: int) -> str:
        from client.bulk import offset_msg_id

        return offset_msg_id(str(self.store_ip[i].as_py()), int(self.store_port[i]), int(self.commit_log_offset[i]))


def concat(parts: list[RecordArrays]) -> RecordArrays:
    """One :class:`RecordArrays` of ``parts`` in order."""
    if len(parts) == 1:
        return parts[0]
    if not parts:
        return RecordArrays.empty()
    return RecordArrays(
        queue_offset=np.concatenate([p.queue_offset for p in parts]),
        commit_log_offset=np.concatenate([p.commit_log_offset for p in parts]),
        body=pa.concat_arrays([p.body for p in parts]),
        properties=pa.concat_arrays([p.properties for p in parts]),
        born_timestamp=np.concatenate([p.born_timestamp for p in parts]),
        store_timestamp=np.concatenate([p.store_timestamp for p in parts]),
        born_host=pa.concat_arrays([p.born_host for p in parts]),
        store_ip=pa.concat_arrays([p.store_ip for p in parts]),
        store_port=np.concatenate([p.store_port for p in parts]),
        reconsume_times=np.concatenate([p.reconsume_times for p in parts]),
    )


_HEAD = np.arange(V4_BODY, dtype=np.int64)


@functools.lru_cache(maxsize=64)
def _head_dtype(itemsize: int) -> np.dtype[np.void]:
    """The fixed head as one numpy record of ``itemsize`` bytes: every field of every record is then a strided view,
    read with one astype. With ``itemsize`` = a record's size, the fields of back-to-back records of that size are
    strided views of the reply itself."""
    return np.dtype(
        {
            "names": list(V4_FIELDS),
            "formats": [dtype for _, dtype in V4_FIELDS.values()],
            "offsets": [offset for offset, _ in V4_FIELDS.values()],
            "itemsize": itemsize,
        }
    )


_HEAD_DTYPE = _head_dtype(V4_BODY)


def _heads(raw: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """The fixed heads (``V4_BODY`` bytes) of the records starting at ``starts``: one gather, as ``n`` records of
    :data:`_HEAD_DTYPE`."""
    return raw[starts[:, None] + _HEAD].view(_HEAD_DTYPE).reshape(-1)


def _field(heads: np.ndarray, name: str) -> np.ndarray:
    """Field ``name`` of every head, as a native-endian int64 array."""
    return heads[name].astype(np.int64)


_VIEW_INLINE = 12  # Arrow's binary_view: values up to 12 bytes sit in the view itself, longer ones are referenced
_INLINE = np.arange(_VIEW_INLINE, dtype=np.int64)


def _spans(buf: bytes, begin: np.ndarray, end: np.ndarray) -> pa.Array:
    """The bytes ``buf[begin[i]:end[i]]`` of every i as one ``binary_view`` array that references ``buf``: no byte
    of the spans is copied here; the one copy happens when a batch is built (:func:`spark_connector.schema.
    columns_to_batch` casts to ``binary``), after the replies of the batch were gathered (:func:`concat` only joins
    views).

    A view is 16 bytes: the length (int32), then either the value itself zero-padded (up to 12 bytes) or its first
    4 bytes, the index of the data buffer (always 0: ``buf``) and the value's offset in it (int32 each)."""
    n = len(begin)
    length = (end - begin).astype(np.int32)
    if n and (length > _VIEW_INLINE).all():  # bodies, properties: every value referenced, none inline
        return _long_spans(buf, begin, length)
    views = np.zeros((n, 4), np.int32)
    views[:, 0] = length
    prefix = views[:, 1:].view(np.uint8)  # each view's 12 bytes after the length, written in place
    size = len(buf)
    inner = begin <= size - _VIEW_INLINE
    if size >= _VIEW_INLINE:
        # every 12-byte window of buf, as rows of a strided view: one row gather copies each value's first bytes
        windows = np.ndarray((size - _VIEW_INLINE + 1, _VIEW_INLINE), np.uint8, buf, strides=(1, 1))
        if inner.all():
            prefix[:] = windows[begin]
        else:
            prefix[inner] = windows[begin[inner]]
    for i in np.flatnonzero(~inner).tolist():  # a value within 12 bytes of buf's end: shorter than 12 bytes
        value = np.frombuffer(buf, np.uint8, int(length[i]), int(begin[i]))
        prefix[i, : len(value)] = value
    short = length < _VIEW_INLINE
    if short.any():  # bytes past a short value's end: the inline padding is zeros
        prefix[short] *= length[short, None] > _INLINE
    long = length > _VIEW_INLINE
    if long.all():
        views[:, 2] = 0
        views[:, 3] = begin
    else:
        views[long, 2] = 0
        views[long, 3] = begin[long]
    return pa.Array.from_buffers(pa.binary_view(), n, [None, pa.py_buffer(views), pa.py_buffer(buf)])


def _long_spans(buf: bytes, begin: np.ndarray, length: np.ndarray) -> pa.Array:
    """:func:`_spans` when every value is longer than 12 bytes: each view is its length, its first 4 bytes (one
    gather of unaligned 4-byte words of ``buf``), buffer 0 and its offset: no 12-byte windows, no masks."""
    n = len(begin)
    words = np.ndarray((len(buf) - 3,), np.int32, buf, strides=(1,))  # the 4 bytes from each position, as stored
    views = np.empty((n, 4), np.int32)
    views[:, 0] = length
    views[:, 1] = words[begin]
    views[:, 2] = 0
    views[:, 3] = begin
    return pa.Array.from_buffers(pa.binary_view(), n, [None, pa.py_buffer(views), pa.py_buffer(buf)])


@functools.lru_cache(maxsize=4096)
def _host_text(key: int) -> tuple[str, str]:
    """("ip:port", "ip") of an address packed as ``ip << 32 | port``."""
    ip = ".".join(str((key >> s) & 0xFF) for s in (56, 48, 40, 32))
    return f"{ip}:{key & 0xFFFFFFFF}", ip


def _hosts(ips: np.ndarray, ports: np.ndarray, with_port: bool) -> pa.Array:
    """Per row "ip:port" (``with_port``) or "ip" strings, formatted once per distinct address and taken from those."""
    keys = (ips << 32) | (ports & 0xFFFFFFFF)
    pick = 0 if with_port else 1
    if (keys == keys[0]).all():  # one producer (or one broker): no sort, no gather
        return pa.repeat(pa.scalar(_host_text(int(keys[0]))[pick], pa.string()), len(keys))
    uniq, inverse = np.unique(keys, return_inverse=True)
    index = pa.array(inverse.reshape(-1).astype(np.int32))
    return pa.array([_host_text(int(k))[pick] for k in uniq], pa.string()).take(index)


def _record_heads(buf: bytes, raw: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """Where each record of a PULL body starts and its fixed head (records of :data:`_HEAD_DTYPE`'s fields); ``None``
    when a record has another layout than :data:`V4_FIELDS`.

    A body whose records all have the first one's size (a producer's messages of one shape: the usual case) is read
    as an array of records of that size laid over the reply: every field of every record is a strided view, nothing
    is gathered; if every record holds that size, the chain of sizes is the records' own. Any other body is walked
    record by record (``client.bulk.v4_record_starts``) and its heads gathered (:func:`_heads`)."""
    end = len(buf)
    size = int.from_bytes(buf[:4], "big", signed=True) if end >= 4 else 0
    if size >= V4_MIN_RECORD and end % size == 0:
        heads = np.ndarray((end // size,), _head_dtype(size), buf)
        if (heads["size"] == size).all():
            if (heads["sys_flag"] & V4_OTHER_LAYOUT).any():
                return None
            return np.arange(0, end, size, dtype=np.int64), heads
    walked = v4_record_starts(buf)
    if walked is None:
        return None
    starts = np.asarray(walked, np.int64)
    return starts, _heads(raw, starts)


def decode_records(buf: bytes, *, min_offset: int = 0, end_offset: int | None = None) -> RecordArrays:
    """The records of a PULL body with queue offsets in ``[min_offset, end_offset)``. Raises ``RecordError`` (from
    ``client.bulk``) on bad bytes."""
    raw = np.frombuffer(buf, np.uint8)
    found = _record_heads(buf, raw)
    if found is None:
        return RecordArrays.from_columns(decode_columns(buf, min_offset=min_offset, end_offset=end_offset))
    starts, heads = found
    if not len(starts):
        return RecordArrays.from_columns(RecordColumns())
    qoff = _field(heads, "queue_offset")
    keep = qoff >= min_offset
    if end_offset is not None:
        keep &= qoff < end_offset
    if not keep.all():
        starts, qoff = starts[keep], qoff[keep]
        heads = _heads(raw, starts)  # compact copies of the kept heads only (a strided view's rows are whole records)
        if not len(starts):
            return RecordArrays.from_columns(RecordColumns())
    magic = _field(heads, "magic")
    body_len = _field(heads, "body_length")
    body_begin = starts + V4_BODY
    body_end = body_begin + body_len
    record_end = starts + _field(heads, "size")
    v2 = magic == MAGIC_V2
    if not (v2 | (magic == MAGIC_V1)).all() or (body_len < 0).any() or (body_end + 3 > record_end).any():
        _reject(buf)
    if v2.any():
        at = np.minimum(body_end, len(buf) - 2)
        topic_len = np.where(v2, (raw[at].astype(np.int64) << 8) | raw[at + 1], raw[body_end])
        props_begin = body_end + np.where(v2, 2, 1) + topic_len + 2
    else:
        props_begin = body_end + raw[body_end].astype(np.int64) + 3
    if (props_begin > record_end).any():
        _reject(buf)
    born_host = _hosts(_field(heads, "born_ip"), _field(heads, "born_port"), with_port=True)
    store_port = _field(heads, "store_port")
    store_ip = _hosts(_field(heads, "store_ip"), store_port, with_port=False)
    return RecordArrays(
        queue_offset=qoff,
        commit_log_offset=_field(heads, "commit_log_offset"),
        body=_spans(buf, body_begin, body_end),
        properties=_spans(buf, props_begin, record_end),
        born_timestamp=_field(heads, "born_timestamp"),
        store_timestamp=_field(heads, "store_timestamp"),
        born_host=born_host,
        store_ip=store_ip,
        store_port=store_port.astype(np.int32),
        reconsume_times=_field(heads, "reconsume_times").astype(np.int32),
    )


def _reject(buf: bytes) -> None:
    """A record whose lengths do not add up: the reference decoder names it (and raises)."""
    decode_columns(buf)
    from client.bulk import RecordError

    raise RecordError("bad record lengths in a PULL body")
