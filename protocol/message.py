"""The message record codec: the commit-log layout, which is also the body of PULL / VIEW / QUERY replies.

Stored message record (MAGIC v1, big-endian), MessageDecoder / CommitLog of RocketMQ 4.x:

    | #  | field                       | size                         | notes                                     |
    |----|-----------------------------|------------------------------|-------------------------------------------|
    | 1  | TOTALSIZE                   | int32                        | whole record, this field included         |
    | 2  | MAGICCODE                   | int32                        | MAGIC_V1 (0xDAA320A7); BLANK_MAGIC = EOF  |
    | 3  | BODYCRC                     | int32                        | zlib.crc32(body) & 0x7FFFFFFF             |
    | 4  | QUEUEID                     | int32                        |                                           |
    | 5  | FLAG                        | int32                        | user flag                                 |
    | 6  | QUEUEOFFSET                 | int64                        | logical offset in the consume queue       |
    | 7  | PHYSICALOFFSET              | int64                        | commit-log offset of this record          |
    | 8  | SYSFLAG                     | int32                        | compression, transaction type, v6 hosts   |
    | 9  | BORNTIMESTAMP               | int64                        | ms                                        |
    | 10 | BORNHOST                    | 4+4 (16+4 if sysFlag&0x10)   | ip bytes + int32 port                     |
    | 11 | STORETIMESTAMP              | int64                        | ms                                        |
    | 12 | STOREHOST                   | 4+4 (16+4 if sysFlag&0x20)   | ip bytes + int32 port                     |
    | 13 | RECONSUMETIMES              | int32                        |                                           |
    | 14 | PREPARED_TRANSACTION_OFFSET | int64                        |                                           |
    | 15 | BODYLEN + BODY              | int32 + bytes                | stored as sent (zlib if sysFlag&1)        |
    | 16 | TOPICLEN + TOPIC            | int8 + bytes                 | topic <= 127 bytes                        |
    | 17 | PROPERTIESLEN + PROPERTIES  | int16 + bytes                | <= 32767 bytes                            |

With IPv4 hosts the fixed part is 91 bytes; QUEUEOFFSET sits at byte 20, PHYSICALOFFSET at 28 and STORETIMESTAMP at
56, so the store encodes a record once and patches those three in place with ``pack_into`` at append time.

Blank end-of-file filler: ``int32 size | int32 BLANK_MAGIC`` then zero padding to the end of the segment.

Properties string: ``name \\x01 value \\x02`` repeated, written with a trailing ``\\x02`` as J does; parsed leniently.

SEND_BATCH_MESSAGE body (MessageDecoder.encodeMessages), records concatenated:
``int32 totalSize | int32 magic(0) | int32 bodyCRC(0) | int32 flag | int32 bodyLen | body | int16 propsLen | props``.

Offset msgId: uppercase hex of ``storeHost ip(4|16) + port int32 + commitLogOffset int64``.
"""

from __future__ import annotations

import functools
import ipaddress
import itertools
import os
import socket
import struct
import time
import zlib
from dataclasses import dataclass, field
from typing import Final

MAGIC_V1: Final = -626843481  # 0xDAA320A7
MAGIC_V2: Final = -626843477  # 0xDAA320AB (5.x, int16 topic length; read only)
BLANK_MAGIC: Final = -875286124  # 0xCBD43194

SYSFLAG_COMPRESSED: Final = 0x1
SYSFLAG_MULTI_TAGS: Final = 0x2
TRANSACTION_NOT_TYPE: Final = 0x0
TRANSACTION_PREPARED_TYPE: Final = 0x4
TRANSACTION_COMMIT_TYPE: Final = 0x8
TRANSACTION_ROLLBACK_TYPE: Final = 0xC
SYSFLAG_BORNHOST_V6: Final = 0x10
SYSFLAG_STOREHOST_V6: Final = 0x20

MAX_TOPIC_BYTES: Final = 127
MAX_PROPERTIES_BYTES: Final = 32767

NAME_VALUE_SEPARATOR: Final = "\x01"
PROPERTY_SEPARATOR: Final = "\x02"

# Fixed-layout prefix up to and including BORNTIMESTAMP (fields 1-9), 48 bytes.
HEAD: Final = struct.Struct(">iiiiiqqiq")
assert HEAD.size == 48
I32: Final = struct.Struct(">i")
I64: Final = struct.Struct(">q")
I16: Final = struct.Struct(">h")
U8: Final = struct.Struct(">b")
HOST4: Final = struct.Struct(">4si")
assert HOST4.size == 8
HOST6: Final = struct.Struct(">16si")
assert HOST6.size == 20
MID: Final = struct.Struct(">iq")  # RECONSUMETIMES, PREPARED_TRANSACTION_OFFSET
assert MID.size == 12

POS_TOTALSIZE: Final = 0
POS_MAGIC: Final = 4
POS_BODYCRC: Final = 8
POS_QUEUEID: Final = 12
POS_FLAG: Final = 16
POS_QUEUEOFFSET: Final = 20
POS_PHYSICALOFFSET: Final = 28
POS_SYSFLAG: Final = 36
POS_BORNTIMESTAMP: Final = 40
POS_BORNHOST: Final = 48
POS_STORETIMESTAMP_V4: Final = 56  # with an IPv4 born host
FIXED_SIZE_V4: Final = 91  # record size with IPv4 hosts and empty body, topic and properties


def transaction_type(sys_flag: int) -> int:
    return sys_flag & TRANSACTION_ROLLBACK_TYPE


def reset_transaction_type(sys_flag: int, tran_type: int) -> int:
    return (sys_flag & ~TRANSACTION_ROLLBACK_TYPE) | tran_type


class PropertyKey:
    """RocketMQ's standard message property names (MessageConst)."""

    KEYS: Final = "KEYS"
    TAGS: Final = "TAGS"
    WAIT_STORE_MSG_OK: Final = "WAIT"
    DELAY_TIME_LEVEL: Final = "DELAY"
    RETRY_TOPIC: Final = "RETRY_TOPIC"
    REAL_TOPIC: Final = "REAL_TOPIC"
    REAL_QUEUE_ID: Final = "REAL_QID"
    TRANSACTION_PREPARED: Final = "TRAN_MSG"
    PRODUCER_GROUP: Final = "PGROUP"
    MIN_OFFSET: Final = "MIN_OFFSET"
    MAX_OFFSET: Final = "MAX_OFFSET"
    BUYER_ID: Final = "BUYER_ID"
    ORIGIN_MESSAGE_ID: Final = "ORIGIN_MESSAGE_ID"
    TRANSFER_FLAG: Final = "TRANSFER_FLAG"
    CORRECTION_FLAG: Final = "CORRECTION_FLAG"
    MQ2_FLAG: Final = "MQ2_FLAG"
    RECONSUME_TIME: Final = "RECONSUME_TIME"
    MSG_REGION: Final = "MSG_REGION"
    TRACE_SWITCH: Final = "TRACE_ON"
    UNIQ_CLIENT_MESSAGE_ID_KEYIDX: Final = "UNIQ_KEY"
    MAX_RECONSUME_TIMES: Final = "MAX_RECONSUME_TIMES"
    CONSUME_START_TIMESTAMP: Final = "CONSUME_START_TIME"
    TRANSACTION_PREPARED_QUEUE_OFFSET: Final = "TRAN_PREPARED_QUEUE_OFFSET"
    TRANSACTION_CHECK_TIMES: Final = "TRANSACTION_CHECK_TIMES"
    CHECK_IMMUNITY_TIME_IN_SECONDS: Final = "CHECK_IMMUNITY_TIME_IN_SECONDS"
    INSTANCE_ID: Final = "INSTANCE_ID"
    CORRELATION_ID: Final = "CORRELATION_ID"
    REPLY_TO_CLIENT: Final = "REPLY_TO_CLIENT"
    TTL: Final = "TTL"
    ARRIVE_TIME: Final = "ARRIVE_TIME"
    PUSH_REPLY_TIME: Final = "PUSH_REPLY_TIME"
    CLUSTER: Final = "CLUSTER"
    MESSAGE_TYPE: Final = "MSG_TYPE"
    INNER_MULTI_DISPATCH: Final = "INNER_MULTI_DISPATCH"
    INNER_MULTI_QUEUE_OFFSET: Final = "INNER_MULTI_QUEUE_OFFSET"
    # short aliases used across the code base
    UNIQ_KEY: Final = "UNIQ_KEY"
    DELAY: Final = "DELAY"
    WAIT: Final = "WAIT"
    REAL_QID: Final = "REAL_QID"
    TRAN_MSG: Final = "TRAN_MSG"
    PGROUP: Final = "PGROUP"


def encode_properties(props: dict[str, str]) -> str:
    """``name\\x01value\\x02`` for each pair, trailing separator included (as J and C++ write it)."""
    if not props:
        return ""
    return "".join(f"{k}\x01{v}\x02" for k, v in props.items())


def decode_properties(text: str) -> dict[str, str]:
    """Parse a properties string; tolerant of a missing trailing separator and empty pieces."""
    out: dict[str, str] = {}
    if not text:
        return out
    for piece in text.split(PROPERTY_SEPARATOR):
        if not piece:
            continue
        name, sep, value = piece.partition(NAME_VALUE_SEPARATOR)
        if sep and name:
            out[name] = value
    return out


def tag_hash(tag: str | None) -> int:
    """Java ``String.hashCode()`` of the tag (signed 32-bit; 0 for no tag), the consume-queue tags code."""
    if not tag:
        return 0
    h = 0
    for unit in _utf16_units(tag):
        h = (31 * h + unit) & 0xFFFFFFFF
    return h - 0x100000000 if h & 0x80000000 else h


def _utf16_units(s: str) -> list[int]:
    if s.isascii():
        return list(s.encode())
    data = s.encode("utf-16-be")
    return [int.from_bytes(data[i : i + 2], "big") for i in range(0, len(data), 2)]


def body_crc(body: bytes | memoryview) -> int:
    return zlib.crc32(body) & 0x7FFFFFFF


@functools.lru_cache(maxsize=4096)
def _host_bytes(host: str) -> tuple[bytes, bool]:
    """Packed address bytes and whether it is IPv6. Unparseable names resolve to 127.0.0.1 bytes.

    Cached: it is called two or three times per stored message with a handful of distinct hosts, and parsing with
    ``ipaddress`` was a third of the put path's CPU."""
    try:
        addr = ipaddress.ip_address(host)
    except ValueError:
        try:
            return socket.inet_aton(socket.gethostbyname(host)), False
        except OSError:
            return b"\x7f\x00\x00\x01", False
    if isinstance(addr, ipaddress.IPv6Address):
        if addr.ipv4_mapped is not None:
            return addr.ipv4_mapped.packed, False
        return addr.packed, True
    return addr.packed, False


def _host_str(raw: bytes) -> str:
    return str(ipaddress.ip_address(raw))


@dataclass(slots=True)
class MessageExt:
    """A decoded stored message (what consumers receive)."""

    topic: str
    body: bytes
    flag: int = 0
    properties: dict[str, str] = field(default_factory=dict)
    queue_id: int = 0
    queue_offset: int = 0
    commit_log_offset: int = 0
    sys_flag: int = 0
    born_timestamp: int = 0
    born_host: tuple[str, int] = ("127.0.0.1", 0)
    store_timestamp: int = 0
    store_host: tuple[str, int] = ("127.0.0.1", 0)
    reconsume_times: int = 0
    prepared_transaction_offset: int = 0
    body_crc: int = 0
    store_size: int = 0

    @property
    def tags(self) -> str | None:
        return self.properties.get(PropertyKey.TAGS)

    @property
    def keys(self) -> list[str]:
        raw = self.properties.get(PropertyKey.KEYS)
        return [k for k in raw.split(" ") if k] if raw else []

    @property
    def offset_msg_id(self) -> str:
        return create_offset_msg_id(self.store_host[0], self.store_host[1], self.commit_log_offset)

    @property
    def msg_id(self) -> str:
        """The client-visible id: UNIQ_KEY when the producer set one, else the offset id."""
        return self.properties.get(PropertyKey.UNIQ_KEY) or self.offset_msg_id


def encode_record(
    *,
    topic: str | bytes,
    body: bytes,
    properties: str | bytes | dict[str, str] = "",
    queue_id: int = 0,
    flag: int = 0,
    queue_offset: int = 0,
    physical_offset: int = 0,
    sys_flag: int = 0,
    born_timestamp: int = 0,
    born_host: tuple[str, int] = ("127.0.0.1", 0),
    store_timestamp: int = 0,
    store_host: tuple[str, int] = ("127.0.0.1", 0),
    reconsume_times: int = 0,
    prepared_transaction_offset: int = 0,
    crc: int | None = None,
) -> bytearray:
    """Encode one MAGIC v1 record. Raises ValueError for a topic over 127 bytes or properties over 32767 bytes."""
    topic_b = topic.encode() if isinstance(topic, str) else topic
    if isinstance(properties, dict):
        properties = encode_properties(properties)
    props_b = properties.encode() if isinstance(properties, str) else properties
    if len(topic_b) > MAX_TOPIC_BYTES:
        raise ValueError(f"topic is {len(topic_b)} bytes, the limit is {MAX_TOPIC_BYTES}")
    if len(props_b) > MAX_PROPERTIES_BYTES:
        raise ValueError(f"properties are {len(props_b)} bytes, the limit is {MAX_PROPERTIES_BYTES}")
    born_raw, born_v6 = _host_bytes(born_host[0])
    store_raw, store_v6 = _host_bytes(store_host[0])
    sys_flag &= ~(SYSFLAG_BORNHOST_V6 | SYSFLAG_STOREHOST_V6)
    if born_v6:
        sys_flag |= SYSFLAG_BORNHOST_V6
    if store_v6:
        sys_flag |= SYSFLAG_STOREHOST_V6
    size = 91 + (12 if born_v6 else 0) + (12 if store_v6 else 0) + len(body) + len(topic_b) + len(props_b)
    buf = bytearray(size)
    HEAD.pack_into(
        buf,
        0,
        size,
        MAGIC_V1,
        body_crc(body) if crc is None else crc,
        queue_id,
        flag,
        queue_offset,
        physical_offset,
        sys_flag,
        born_timestamp,
    )
    pos = 48
    if born_v6:
        HOST6.pack_into(buf, pos, born_raw, born_host[1])
        pos += 20
    else:
        HOST4.pack_into(buf, pos, born_raw, born_host[1])
        pos += 8
    I64.pack_into(buf, pos, store_timestamp)
    pos += 8
    if store_v6:
        HOST6.pack_into(buf, pos, store_raw, store_host[1])
        pos += 20
    else:
        HOST4.pack_into(buf, pos, store_raw, store_host[1])
        pos += 8
    MID.pack_into(buf, pos, reconsume_times, prepared_transaction_offset)
    pos += 12
    I32.pack_into(buf, pos, len(body))
    pos += 4
    buf[pos : pos + len(body)] = body
    pos += len(body)
    U8.pack_into(buf, pos, len(topic_b))
    pos += 1
    buf[pos : pos + len(topic_b)] = topic_b
    pos += len(topic_b)
    I16.pack_into(buf, pos, len(props_b))
    pos += 2
    buf[pos : pos + len(props_b)] = props_b
    return buf


def store_timestamp_pos(sys_flag: int) -> int:
    """Byte position of STORETIMESTAMP in a record with this sysFlag."""
    return POS_STORETIMESTAMP_V4 + (12 if sys_flag & SYSFLAG_BORNHOST_V6 else 0)


class RecordError(ValueError):
    """A record that fails validation (size, magic, CRC, field lengths)."""


def decode_record(
    buf: bytes | bytearray | memoryview, pos: int = 0, *, decompress: bool = False
) -> tuple[MessageExt, int]:
    """Decode the record at ``pos``; returns it and the position after it. Raises RecordError on bad bytes."""
    try:
        (size, magic, crc, queue_id, flag, queue_offset, phys, sys_flag, born_ts) = HEAD.unpack_from(buf, pos)
        if magic not in (MAGIC_V1, MAGIC_V2):
            raise RecordError(f"bad magic code {magic} at {pos}")
        if size < FIXED_SIZE_V4 or pos + size > len(buf):
            raise RecordError(f"bad record size {size} at {pos}")
        p = pos + 48
        if sys_flag & SYSFLAG_BORNHOST_V6:
            braw, bport = HOST6.unpack_from(buf, p)
            p += 20
        else:
            braw, bport = HOST4.unpack_from(buf, p)
            p += 8
        (store_ts,) = I64.unpack_from(buf, p)
        p += 8
        if sys_flag & SYSFLAG_STOREHOST_V6:
            sraw, sport = HOST6.unpack_from(buf, p)
            p += 20
        else:
            sraw, sport = HOST4.unpack_from(buf, p)
            p += 8
        reconsume, prepared = MID.unpack_from(buf, p)
        p += 12
        (blen,) = I32.unpack_from(buf, p)
        p += 4
        if blen < 0 or p + blen > pos + size:
            raise RecordError(f"bad body length {blen} at {pos}")
        body = bytes(buf[p : p + blen])
        p += blen
        if magic == MAGIC_V1:
            (tlen,) = U8.unpack_from(buf, p)
            p += 1
        else:
            (tlen,) = I16.unpack_from(buf, p)
            p += 2
        if tlen < 0:
            raise RecordError(f"bad topic length {tlen} at {pos}")
        topic = bytes(buf[p : p + tlen]).decode()
        p += tlen
        (plen,) = I16.unpack_from(buf, p)
        p += 2
        if plen < 0 or p + plen != pos + size:
            raise RecordError(f"record fields do not add up to its size {size} at {pos}")
        props = decode_properties(bytes(buf[p : p + plen]).decode()) if plen else {}
    except struct.error as exc:
        raise RecordError(f"truncated record at {pos}: {exc}") from None
    except UnicodeDecodeError as exc:
        raise RecordError(f"undecodable text in record at {pos}: {exc}") from None
    if decompress and sys_flag & SYSFLAG_COMPRESSED:
        try:
            body = zlib.decompress(body)
        except zlib.error as exc:
            raise RecordError(f"compressed body does not inflate at {pos}: {exc}") from None
    msg = MessageExt(
        topic=topic,
        body=body,
        flag=flag,
        properties=props,
        queue_id=queue_id,
        queue_offset=queue_offset,
        commit_log_offset=phys,
        sys_flag=sys_flag,
        born_timestamp=born_ts,
        born_host=(_host_str(braw), bport),
        store_timestamp=store_ts,
        store_host=(_host_str(sraw), sport),
        reconsume_times=reconsume,
        prepared_transaction_offset=prepared,
        body_crc=crc,
        store_size=size,
    )
    return msg, pos + size


def decode_records(buf: bytes | bytearray | memoryview, *, decompress: bool = False) -> list[MessageExt]:
    """Decode a PULL / QUERY body: records back to back."""
    out: list[MessageExt] = []
    pos = 0
    end = len(buf)
    while pos < end:
        msg, pos = decode_record(buf, pos, decompress=decompress)
        out.append(msg)
    return out


BLANK: Final = -1


def check_record(buf: bytes | bytearray | memoryview, pos: int, *, check_crc: bool = True) -> int:
    """Validate the record at ``pos`` for recovery. Returns its size, ``BLANK`` for an end-of-file filler, and
    raises RecordError when the bytes are not a whole, valid record (a torn or garbled tail)."""
    if pos + 8 > len(buf):
        raise RecordError(f"no room for a record header at {pos}")
    (size,) = I32.unpack_from(buf, pos)
    (magic,) = I32.unpack_from(buf, pos + 4)
    if magic == BLANK_MAGIC:
        return BLANK
    if magic != MAGIC_V1:
        raise RecordError(f"bad magic code {magic} at {pos}")
    if size < FIXED_SIZE_V4 or pos + size > len(buf):
        raise RecordError(f"bad record size {size} at {pos}")
    (sys_flag,) = I32.unpack_from(buf, pos + POS_SYSFLAG)
    p = pos + 48 + (20 if sys_flag & SYSFLAG_BORNHOST_V6 else 8) + 8
    p += (20 if sys_flag & SYSFLAG_STOREHOST_V6 else 8) + 12
    (blen,) = I32.unpack_from(buf, p)
    p += 4
    if blen < 0 or p + blen + 3 > pos + size:
        raise RecordError(f"bad body length {blen} at {pos}")
    if check_crc:
        (crc,) = I32.unpack_from(buf, pos + POS_BODYCRC)
        if body_crc(memoryview(buf)[p : p + blen]) != crc:
            raise RecordError(f"body CRC mismatch at {pos}")
    p += blen
    (tlen,) = U8.unpack_from(buf, p)
    p += 1 + tlen
    if tlen < 0 or p + 2 > pos + size:
        raise RecordError(f"bad topic length at {pos}")
    (plen,) = I16.unpack_from(buf, p)
    if plen < 0 or p + 2 + plen != pos + size:
        raise RecordError(f"record fields do not add up to its size {size} at {pos}")
    return int(size)


# -- ids -------------------------------------------------------------------------------------------------------------


def create_offset_msg_id(ip: str, port: int, commit_log_offset: int) -> str:
    raw, _v6 = _host_bytes(ip)
    return (raw + I32.pack(port) + I64.pack(commit_log_offset)).hex().upper()


def decode_offset_msg_id(msg_id: str) -> tuple[str, int, int]:
    """(ip, port, commit-log offset) of an offset msgId; ValueError if it is not one."""
    try:
        raw = bytes.fromhex(msg_id)
    except ValueError:
        raise ValueError(f"not an offset msgId: {msg_id!r}") from None
    if len(raw) == 16:
        ip_raw, rest = raw[:4], raw[4:]
    elif len(raw) == 28:
        ip_raw, rest = raw[:16], raw[16:]
    else:
        raise ValueError(f"not an offset msgId: {msg_id!r}")
    (port,) = I32.unpack_from(rest, 0)
    (offset,) = I64.unpack_from(rest, 4)
    return _host_str(ip_raw), port, offset


def _local_ip_bytes() -> bytes:
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect(("10.255.255.255", 1))  # no packet is sent for a UDP connect
            return socket.inet_aton(s.getsockname()[0])
    except OSError:
        return b"\x7f\x00\x00\x01"


_UNIQ_PREFIX: bytes | None = None
_uniq_counter = itertools.count()


def _month_start_ms(now_ms: int) -> int:
    t = time.localtime(now_ms / 1000)
    return int(time.mktime((t.tm_year, t.tm_mon, 1, 0, 0, 0, 0, 0, -1)) * 1000)


_month = (0, 0)  # (month start ms, next month start ms)


def create_uniq_id() -> str:
    """A J-style client message id: hex of ip(4) + pid(int16) + hash(int32) + ms since month start(int32) +
    counter(int16), 32 uppercase hex chars."""
    global _UNIQ_PREFIX, _month
    if _UNIQ_PREFIX is None:
        _UNIQ_PREFIX = _local_ip_bytes() + struct.pack(">hi", os.getpid() & 0x7FFF, id(_uniq_counter) & 0x7FFFFFFF)
    now = int(time.time() * 1000)
    if not _month[0] <= now < _month[1]:
        start = _month_start_ms(now)
        t = time.localtime(now / 1000)
        nxt_year, nxt_mon = (t.tm_year + 1, 1) if t.tm_mon == 12 else (t.tm_year, t.tm_mon + 1)
        _month = (start, int(time.mktime((nxt_year, nxt_mon, 1, 0, 0, 0, 0, 0, -1)) * 1000))
    delta = (now - _month[0]) & 0x7FFFFFFF
    return (_UNIQ_PREFIX + struct.pack(">iH", delta, next(_uniq_counter) & 0xFFFF)).hex().upper()


# -- batch body ------------------------------------------------------------------------------------------------------

_BATCH_HEAD: Final = struct.Struct(">iiiii")  # totalSize, magic, bodyCRC, flag, bodyLen
assert _BATCH_HEAD.size == 20


@dataclass(slots=True)
class BatchItem:
    body: bytes
    properties: dict[str, str]
    flag: int = 0


def encode_batch(items: list[BatchItem]) -> bytes:
    parts: list[bytes] = []
    for it in items:
        props = encode_properties(it.properties).encode()
        total = 20 + len(it.body) + 2 + len(props)
        parts.append(_BATCH_HEAD.pack(total, 0, 0, it.flag, len(it.body)))
        parts.append(it.body)
        parts.append(I16.pack(len(props)))
        parts.append(props)
    return b"".join(parts)


def decode_batch(body: bytes | memoryview) -> list[BatchItem]:
    """Unpack a SEND_BATCH_MESSAGE body; RecordError on inconsistent lengths."""
    out: list[BatchItem] = []
    pos = 0
    end = len(body)
    try:
        while pos < end:
            total, _magic, _crc, flag, blen = _BATCH_HEAD.unpack_from(body, pos)
            if total < 22 or pos + total > end or blen < 0 or 20 + blen + 2 > total:
                raise RecordError(f"bad batch entry at {pos}")
            p = pos + 20
            data = bytes(body[p : p + blen])
            p += blen
            (plen,) = I16.unpack_from(body, p)
            p += 2
            if plen < 0 or p + plen != pos + total:
                raise RecordError(f"bad batch entry properties at {pos}")
            props = decode_properties(bytes(body[p : p + plen]).decode()) if plen else {}
            out.append(BatchItem(data, props, flag))
            pos += total
    except struct.error as exc:
        raise RecordError(f"truncated batch entry at {pos}: {exc}") from None
    except UnicodeDecodeError as exc:
        raise RecordError(f"undecodable batch properties at {pos}: {exc}") from None
    return out
