"""Bulk reads and sends for columnar callers (the Spark connector): a PULL_MESSAGE that keeps the records undecoded,
a decoder that turns a PULL body straight into per-field column lists, with no per-message object in between, and
a SEND_BATCH_MESSAGE from bodies and properties texts the caller built for many rows at once
(:func:`send_batch_texts`), or from a body the caller encoded whole (:func:`send_batch_payload`, with ids from
:func:`uniq_id_block`).

:func:`pull_raw` is ``PullConsumer.pull`` without the decoding: the reply's status and queue bounds plus the records'
bytes. :func:`decode_columns` walks those bytes once and appends each field to a list (:class:`RecordColumns`), which
a caller hands to Arrow (or any columnar builder) whole. Properties stay RocketMQ's raw ``name\\x01value\\x02`` text
(:data:`NAME_VALUE_SEPARATOR`, :data:`PROPERTY_SEPARATOR`), for the caller to split in bulk; bodies are inflated when
the record says they were compressed. Tag filtering is left to the caller (the broker already filters by tag hash;
an exact check needs the TAGS property, which the caller has).
"""

from __future__ import annotations

import socket
import struct
import zlib
from dataclasses import dataclass, field, replace

from client.consumer.pull import PullConsumer
from client.errors import MessageTooLargeError, MQClientError
from client.message import MessageQueue, validate_topic
from client.producer.producer import Producer
from client.results import PullStatus, SendResult
from protocol.batch import BATCH_HEAD_FIELDS, BATCH_HEAD_SIZE, BATCH_PROPS_LEN, encode_batch_texts
from protocol.codes import ResponseCode
from protocol.headers import PULL_FLAG_SUBSCRIPTION, PullMessageRequestHeader
from protocol.message_properties import NAME_VALUE_SEPARATOR, PROPERTY_SEPARATOR, PropertyKey
from protocol.msg_id import create_offset_msg_id
from protocol.record import (
    DECODE_HEAD_V4,
    HOST4,
    HOST6,
    I16,
    I32,
    I64,
    MAGIC_V1,
    MAGIC_V2,
    MID,
    POS_BODYLEN_V4,
    POS_BORNHOST,
    POS_BORNTIMESTAMP,
    POS_MAGIC,
    POS_PHYSICALOFFSET,
    POS_QUEUEOFFSET,
    POS_RECONSUMETIMES_V4,
    POS_STOREHOST_V4,
    POS_STORETIMESTAMP_V4,
    POS_SYSFLAG,
    POS_TOTALSIZE,
    SYSFLAG_BORNHOST_V6,
    SYSFLAG_COMPRESSED,
    SYSFLAG_STOREHOST_V6,
    RecordError,
)
from protocol.record import HEAD as HEAD_ANY
from runtime.msg_id import create_uniq_id_block, create_uniq_ids

__all__ = [
    "BATCH_HEAD_FIELDS",
    "BATCH_HEAD_SIZE",
    "BATCH_PROPS_LEN",
    "MAGIC_V1",
    "MAGIC_V2",
    "NAME_VALUE_SEPARATOR",
    "PROPERTY_SEPARATOR",
    "UNIQ_PROPERTY",
    "V4_BODY",
    "V4_FIELDS",
    "V4_MIN_RECORD",
    "V4_OTHER_LAYOUT",
    "RawPullResult",
    "RecordColumns",
    "RecordError",
    "decode_columns",
    "offset_msg_id",
    "pull_raw",
    "send_batch_payload",
    "send_batch_texts",
    "uniq_id_block",
    "v4_record_starts",
]

_STATUS: dict[int, PullStatus] = {
    ResponseCode.SUCCESS: PullStatus.FOUND,
    ResponseCode.PULL_NOT_FOUND: PullStatus.NO_NEW_MSG,
    ResponseCode.PULL_RETRY_IMMEDIATELY: PullStatus.NO_MATCHED_MSG,
    ResponseCode.PULL_OFFSET_MOVED: PullStatus.OFFSET_ILLEGAL,
}
_UNIQ = "UNIQ_KEY" + NAME_VALUE_SEPARATOR
# The fixed head of a record whose born and store hosts are IPv4 (protocol.record's table), up to the body length.
HEAD_V4 = DECODE_HEAD_V4
# The same head as byte offsets from a record's start (big-endian fields), for columnar decoders that gather a field
# of many records at once (:func:`v4_record_starts`); the body starts at V4_BODY, then TOPICLEN (int8 with MAGIC_V1,
# int16 with MAGIC_V2) + TOPIC, PROPERTIESLEN (int16) + PROPERTIES up to the record's end.
V4_FIELDS: dict[str, tuple[int, str]] = {  # name: (offset, numpy-style big-endian type)
    "size": (POS_TOTALSIZE, ">i4"),
    "magic": (POS_MAGIC, ">i4"),
    "queue_offset": (POS_QUEUEOFFSET, ">i8"),
    "commit_log_offset": (POS_PHYSICALOFFSET, ">i8"),
    "born_timestamp": (POS_BORNTIMESTAMP, ">i8"),
    "born_ip": (POS_BORNHOST, ">u4"),
    "born_port": (POS_BORNHOST + 4, ">i4"),
    "store_timestamp": (POS_STORETIMESTAMP_V4, ">i8"),
    "store_ip": (POS_STOREHOST_V4, ">u4"),
    "store_port": (POS_STOREHOST_V4 + 4, ">i4"),
    "reconsume_times": (POS_RECONSUMETIMES_V4, ">i4"),
    "sys_flag": (POS_SYSFLAG, ">i4"),
    "body_length": (POS_BODYLEN_V4, ">i4"),
}
V4_BODY = HEAD_V4.size
_SIZE_AND_SYSFLAG = struct.Struct(f">i{POS_SYSFLAG - 4}xi")
_NOT_V4 = SYSFLAG_BORNHOST_V6 | SYSFLAG_STOREHOST_V6 | SYSFLAG_COMPRESSED
V4_OTHER_LAYOUT = _NOT_V4  # sys_flag bits of a record that does not have the V4_FIELDS layout (IPv6 host, compressed)
_MIN_V4_RECORD = V4_BODY + 1 + 2
V4_MIN_RECORD = _MIN_V4_RECORD  # the smallest record with that layout (empty topic and properties lengths)


@dataclass(slots=True)
class RawPullResult:
    """One pull reply: status, the queue's next/min/max offsets, and the records (FOUND only) undecoded."""

    status: PullStatus
    next_begin_offset: int
    min_offset: int
    max_offset: int
    records: bytes = b""


async def pull_raw(
    consumer: PullConsumer, mq: MessageQueue, offset: int, max_nums: int = 32, expression: str = "*"
) -> RawPullResult:
    """One PULL_MESSAGE from ``offset`` (no long polling) through ``consumer``'s client instance, undecoded."""
    header = PullMessageRequestHeader(
        consumer_group=consumer.group,
        topic=mq.topic,
        queue_id=mq.queue_id,
        queue_offset=offset,
        max_msg_nums=max_nums,
        sys_flag=PULL_FLAG_SUBSCRIPTION,
        commit_offset=-1,
        suspend_timeout_millis=0,
        sub_version=0,
        subscription=expression or "*",
        expression_type="TAG",
    )
    instance = consumer.instance
    addr = await instance.find_broker_addr(mq, master_only=False)
    code, resp, body = await instance.api.pull(addr, header, instance.request_timeout + 7)
    status = _STATUS[code]
    records = bytes(body) if status is PullStatus.FOUND and body else b""
    return RawPullResult(status, resp.next_begin_offset, resp.min_offset, resp.max_offset, records)


@dataclass(slots=True)
class RecordColumns:
    """Fields of decoded records, one list per field, in record order."""

    queue_offset: list[int] = field(default_factory=list)
    commit_log_offset: list[int] = field(default_factory=list)
    body: list[bytes] = field(default_factory=list)
    properties: list[bytes] = field(default_factory=list)  # raw UTF-8 "name\x01value\x02..." text
    born_timestamp: list[int] = field(default_factory=list)  # epoch ms
    store_timestamp: list[int] = field(default_factory=list)  # epoch ms
    born_host: list[str] = field(default_factory=list)  # "ip:port" ("[ipv6]:port")
    store_host: list[tuple[str, int]] = field(default_factory=list)  # (ip, port)
    reconsume_times: list[int] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.queue_offset)

    def offset_msg_id(self, i: int) -> str:
        """The broker's offset message id of record ``i`` (store host + commit log offset)."""
        host, port = self.store_host[i]
        return create_offset_msg_id(host, port, self.commit_log_offset[i])

    def msg_ids(self) -> list[str]:
        """Each record's client-visible id: its UNIQ_KEY property when set, else its offset message id."""
        out = []
        for i, props in enumerate(self.properties):
            text = props.decode()
            uniq = _uniq(text) if _UNIQ in text else None
            out.append(uniq or self.offset_msg_id(i))
        return out


def v4_record_starts(buf: bytes) -> list[int] | None:
    """Where each record of a PULL body starts, when every record has IPv4 hosts and an uncompressed body (the
    fixed layout of :data:`V4_FIELDS`); ``None`` when one does not (decode those replies with
    :func:`decode_columns`). Only the size and the system flag of each record are read here. Raises ``RecordError``
    when a record's size does not fit the body."""
    starts: list[int] = []
    add = starts.append
    unpack = _SIZE_AND_SYSFLAG.unpack_from
    pos, end = 0, len(buf)
    try:
        while pos < end:
            size, sys_flag = unpack(buf, pos)
            if sys_flag & _NOT_V4:
                return None
            if size < _MIN_V4_RECORD or pos + size > end:
                raise RecordError(f"bad record size {size} at {pos}")
            add(pos)
            pos += size
    except struct.error as exc:
        raise RecordError(f"truncated record at {pos}: {exc}") from None
    return starts


def offset_msg_id(ip: str, port: int, commit_log_offset: int) -> str:
    """The broker's offset message id of a record stored at ``commit_log_offset`` by the broker at ``ip:port``."""
    return create_offset_msg_id(ip, port, commit_log_offset)


def _ip(raw: bytes) -> str:
    return socket.inet_ntoa(raw) if len(raw) == 4 else socket.inet_ntop(socket.AF_INET6, raw)


def _uniq(props: str) -> str | None:
    i = props.find(_UNIQ)
    while i > 0 and props[i - 1] != PROPERTY_SEPARATOR:
        i = props.find(_UNIQ, i + 1)
    if i < 0:
        return None
    start = i + len(_UNIQ)
    end = props.find(PROPERTY_SEPARATOR, start)
    return props[start : end if end >= 0 else len(props)]


def decode_columns(
    buf: bytes, out: RecordColumns | None = None, *, min_offset: int = 0, end_offset: int | None = None
) -> RecordColumns:
    """Append the records of a PULL body to ``out`` (a new :class:`RecordColumns` by default); records with a queue
    offset below ``min_offset`` are skipped, decoding stops at the first at or above ``end_offset``. Raises
    ``protocol``'s RecordError on bad bytes."""
    cols = out if out is not None else RecordColumns()
    q_off, phys_l, bodies, props_l = cols.queue_offset, cols.commit_log_offset, cols.body, cols.properties
    born_l, store_l, host_l, shost_l = cols.born_timestamp, cols.store_timestamp, cols.born_host, cols.store_host
    recon_l = cols.reconsume_times
    hosts: dict[tuple[bytes, int], str] = {}
    store_hosts: dict[tuple[bytes, int], tuple[str, int]] = {}
    pos, end_all = 0, len(buf)
    unpack_v4 = HEAD_V4.unpack_from
    i16 = I16.unpack_from
    try:
        while pos < end_all:
            (sys_flag,) = I32.unpack_from(buf, pos + POS_SYSFLAG)
            if not sys_flag & (SYSFLAG_BORNHOST_V6 | SYSFLAG_STOREHOST_V6):
                (
                    size,
                    magic,
                    _crc,
                    _qid,
                    _flag,
                    qoff,
                    phys,
                    _sf,
                    born,
                    braw,
                    bport,
                    store,
                    sraw,
                    sport,
                    recon,
                    _p,
                    blen,
                ) = unpack_v4(buf, pos)
                p = pos + DECODE_HEAD_V4.size
            else:
                (size, magic, _crc, _qid, _flag, qoff, phys, _sf, born) = HEAD_ANY.unpack_from(buf, pos)
                p = pos + HEAD_ANY.size
                hs = HOST6 if sys_flag & SYSFLAG_BORNHOST_V6 else HOST4
                braw, bport = hs.unpack_from(buf, p)
                p += hs.size
                (store,) = I64.unpack_from(buf, p)
                p += 8
                hs = HOST6 if sys_flag & SYSFLAG_STOREHOST_V6 else HOST4
                sraw, sport = hs.unpack_from(buf, p)
                p += hs.size
                recon, _p = MID.unpack_from(buf, p)
                p += 12
                (blen,) = I32.unpack_from(buf, p)
                p += 4
            end = pos + size
            if (magic != MAGIC_V1 and magic != MAGIC_V2) or end > end_all or blen < 0 or p + blen > end:
                raise RecordError(f"bad record at {pos}")
            if qoff < min_offset:
                pos = end
                continue
            if end_offset is not None and qoff >= end_offset:
                break
            body = buf[p : p + blen]
            if sys_flag & SYSFLAG_COMPRESSED:
                body = zlib.decompress(body)
            p += blen
            p += 1 + buf[p] if magic == MAGIC_V1 else 2 + i16(buf, p)[0]
            host = hosts.get((braw, bport))
            if host is None:
                ip = _ip(braw)
                host = hosts[(braw, bport)] = f"[{ip}]:{bport}" if ":" in ip else f"{ip}:{bport}"
            shost = store_hosts.get((sraw, sport))
            if shost is None:
                shost = store_hosts[(sraw, sport)] = (_ip(sraw), sport)
            q_off.append(qoff)
            phys_l.append(phys)
            bodies.append(body)
            props_l.append(buf[p + 2 : end])
            born_l.append(born)
            store_l.append(store)
            host_l.append(host)
            shost_l.append(shost)
            recon_l.append(recon)
            pos = end
    except (IndexError, ValueError, zlib.error) as exc:  # struct.error is a ValueError
        if isinstance(exc, RecordError):
            raise
        raise RecordError(f"truncated or bad record at {pos}: {exc}") from None
    return cols


_UNIQ_TEXT = PropertyKey.UNIQ_KEY + NAME_VALUE_SEPARATOR
UNIQ_PROPERTY = _UNIQ_TEXT  # "UNIQ_KEY\x01": what precedes a message's id in its properties text


async def send_batch_texts(
    producer: Producer,
    topic: str,
    items: list[tuple[bytes, str]],
    *,
    queue: MessageQueue | None = None,
    timeout: float | None = None,
) -> SendResult:
    """``producer.send_batch`` for messages already encoded: ``(body, properties text)`` pairs, the text being
    RocketMQ's ``name\x01value\x02`` form of TAGS, KEYS, WAIT and the user properties (no UNIQ_KEY: each message
    gets a fresh one here, as ``send_batch`` gives them). The same checks, retries and result as ``send_batch``;
    a single message goes as a plain send (SEND_MESSAGE_V2, which ACL 1.0 checks against the topic's permissions as
    J 4.x does; it leaves SEND_BATCH_MESSAGE unchecked)."""
    if not items:
        raise MQClientError("the batch is empty")
    validate_topic(topic, sending=True)
    uniq = create_uniq_ids(len(items))
    encoded: list[tuple[int, bytes, str]] = []
    add = encoded.append
    for (body, text), uid in zip(items, uniq, strict=True):
        if not body:
            raise MQClientError("the message body is empty")
        add((0, body, f"{text}{_UNIQ_TEXT}{uid}{PROPERTY_SEPARATOR}"))
    limit = producer.config.max_message_size
    if len(encoded) == 1:
        _, body, text = encoded[0]
        if len(body) > limit:
            raise MessageTooLargeError(f"the message body size over max value, MAX: {limit}")
        result = await producer._send(topic, body, 0, text, 0, queue, timeout, None)
        return replace(result, msg_id=uniq[0])
    payload = encode_batch_texts(encoded)
    if len(payload) > limit:
        raise MessageTooLargeError(f"the batch size {len(payload)} is over max value, MAX: {limit}")
    result = await producer._send(topic, payload, 0, "", 0, queue, timeout, None, batch=True)
    return replace(result, msg_id=",".join(uniq))


def uniq_id_block(n: int) -> tuple[str, int]:
    """``n`` fresh UNIQ_KEY ids of this process as ``(head, first)``: id ``i`` is ``head`` (28 hex chars) followed by
    ``(first + i) & 0xFFFF`` as 4 uppercase hex chars; for callers that write the ids into a batch in bulk."""
    return create_uniq_id_block(n)


async def send_batch_payload(
    producer: Producer,
    topic: str,
    payload: bytes,
    msg_ids: str,
    *,
    queue: MessageQueue | None = None,
    timeout: float | None = None,
) -> SendResult:
    """One SEND_BATCH_MESSAGE whose body the caller encoded (``protocol.batch``'s layout, two or more entries, each
    with its UNIQ_KEY, e.g. from :func:`uniq_id_block`); ``msg_ids`` (the ids, comma-separated) becomes the result's
    ``msg_id`` as ``send_batch`` gives it. The same size check, retries and result as ``send_batch``. A single
    message should go through :func:`send_batch_texts` (SEND_MESSAGE_V2, which ACL 1.0 checks)."""
    validate_topic(topic, sending=True)
    limit = producer.config.max_message_size
    if len(payload) > limit:
        raise MessageTooLargeError(f"the batch size {len(payload)} is over max value, MAX: {limit}")
    result = await producer._send(topic, payload, 0, "", 0, queue, timeout, None, batch=True)
    return replace(result, msg_id=msg_ids)
