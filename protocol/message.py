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

With IPv4 hosts the fixed part is 91 bytes and fields 1-15 are one ``struct`` (``RECORD_HEAD_V4``, 88 bytes, each host
packed as an 8-byte ``ip + port`` block). QUEUEOFFSET sits at byte 20, PHYSICALOFFSET at 28 and STORETIMESTAMP at 56
(``POS_*``): a record encoded ahead of time can have those three patched in place with ``pack_into``; the store, which
knows them when it encodes, packs them directly and never re-encodes.

Blank end-of-file filler: ``int32 size | int32 BLANK_MAGIC`` then zero padding to the end of the segment.

Properties string: ``name \\x01 value \\x02`` repeated, written with a trailing ``\\x02`` as J does; parsed leniently.

SEND_BATCH_MESSAGE body (MessageDecoder.encodeMessages), records concatenated:
``int32 totalSize | int32 magic(0) | int32 bodyCRC(0) | int32 flag | int32 bodyLen | body | int16 propsLen | props``.

Offset msgId: uppercase hex of ``storeHost ip(4|16) + port int32 + commitLogOffset int64``.
"""

from __future__ import annotations

import ipaddress
import itertools
import os
import socket
import struct
import time
import zlib
from collections.abc import Iterable
from dataclasses import dataclass, field, fields
from typing import Any, Final

from protocol.crc import crc32

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

# the broker store's whole-record CRC, the last property of a stored record (broker/store/record_check.py); a
# store detail, so decoding drops it
STORE_CRC_PROPERTY: Final = "__CRC32#"

MAX_TOPIC_BYTES: Final = 127
MAX_PROPERTIES_BYTES: Final = 32767

NAME_VALUE_SEPARATOR: Final = "\x01"
PROPERTY_SEPARATOR: Final = "\x02"

# Fixed-layout prefix up to and including BORNTIMESTAMP (fields 1-9), 48 bytes.
HEAD: Final = struct.Struct(">iiiiiqqiq")
assert HEAD.size == 48
# Fields 1-15 of a record whose hosts are both IPv4, each host as one 8-byte block (ip(4) + port int32): the
# encoder's single pack. TOTALSIZE MAGIC BODYCRC QUEUEID FLAG QUEUEOFFSET PHYSICALOFFSET SYSFLAG BORNTIMESTAMP
# BORNHOST STORETIMESTAMP STOREHOST RECONSUMETIMES PREPARED_TRANSACTION_OFFSET BODYLEN.
RECORD_HEAD_V4: Final = struct.Struct(">iiiiiqqiq8sq8siqi")
assert RECORD_HEAD_V4.size == 88
# The same 88 bytes with hosts split into ip / port, for decoding.
_DECODE_HEAD_V4: Final = struct.Struct(">iiiiiqqiq4siq4siiqi")
assert _DECODE_HEAD_V4.size == 88
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
POS_BODYLEN_V4: Final = 84  # with IPv4 born and store hosts
FIXED_SIZE_V4: Final = 91  # record size with IPv4 hosts and empty body, topic and properties


def transaction_type(sys_flag: int) -> int:
    return sys_flag & TRANSACTION_ROLLBACK_TYPE


def reset_transaction_type(sys_flag: int, tran_type: int) -> int:
    return (sys_flag & ~TRANSACTION_ROLLBACK_TYPE) | tran_type


class PropertyKey:
    """RocketMQ's standard message property names (MessageConst). Attribute names are J's constant names; every key
    also has an attribute named like the key string itself (``PropertyKey.TRACE_ON == "TRACE_ON"``)."""

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
    TRANSACTION_ID: Final = "__transactionId__"
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
    # the same keys under the names of their strings
    UNIQ_KEY: Final = "UNIQ_KEY"
    DELAY: Final = "DELAY"
    WAIT: Final = "WAIT"
    REAL_QID: Final = "REAL_QID"
    TRAN_MSG: Final = "TRAN_MSG"
    PGROUP: Final = "PGROUP"
    TRACE_ON: Final = "TRACE_ON"
    CONSUME_START_TIME: Final = "CONSUME_START_TIME"
    TRAN_PREPARED_QUEUE_OFFSET: Final = "TRAN_PREPARED_QUEUE_OFFSET"
    MSG_TYPE: Final = "MSG_TYPE"


def encode_properties(props: dict[str, str]) -> str:
    """``name\\x01value\\x02`` for each pair, trailing separator included (as J and C++ write it)."""
    if not props:
        return ""
    return "".join([f"{k}\x01{v}\x02" for k, v in props.items()])


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


def get_property(text: str, name: str) -> str | None:
    """One property's value straight from a properties string, without decoding the rest (the store's hot path).

    A name matches only at the start of a pair (the string's start or after ``\\x02``). When a name occurs twice the
    last one wins, as in ``decode_properties``."""
    key = name + NAME_VALUE_SEPARATOR
    i = text.rfind(key)
    while i > 0 and text[i - 1] != PROPERTY_SEPARATOR:
        i = text.rfind(key, 0, i)
    if i < 0:
        return None
    start = i + len(key)
    end = text.find(PROPERTY_SEPARATOR, start)
    return text[start:] if end < 0 else text[start:end]


_TAG_HASH_CACHE: dict[str, int] = {}
_TAG_HASH_CACHE_MAX: Final = 8192


def tag_hash(tag: str | None) -> int:
    """Java ``String.hashCode()`` of the tag (signed 32-bit; 0 for no tag), the consume-queue tags code.

    Tags have few distinct values, so results are cached (bounded)."""
    if not tag:
        return 0
    h = _TAG_HASH_CACHE.get(tag)
    if h is None:
        h = java_string_hash(tag)
        if len(_TAG_HASH_CACHE) >= _TAG_HASH_CACHE_MAX:
            _TAG_HASH_CACHE.clear()
        _TAG_HASH_CACHE[tag] = h
    return h


def java_string_hash(s: str) -> int:
    """Java ``String.hashCode()``: over UTF-16 code units, 32-bit signed."""
    h = 0
    for unit in _utf16_units(s):
        h = (31 * h + unit) & 0xFFFFFFFF
    return h - 0x100000000 if h & 0x80000000 else h


def _utf16_units(s: str) -> Iterable[int]:
    if s.isascii():
        return s.encode()
    data = s.encode("utf-16-be")
    return [int.from_bytes(data[i : i + 2], "big") for i in range(0, len(data), 2)]


def body_crc(body: bytes | bytearray | memoryview) -> int:
    return crc32(body) & 0x7FFFFFFF


_HOST_CACHE: dict[str, tuple[bytes, bool]] = {}
_HOST_BLOCK_CACHE: dict[tuple[str, int], bytes] = {}
_HOST_CACHE_MAX: Final = 4096


def _host_bytes(host: str) -> tuple[bytes, bool]:
    """Packed address bytes and whether it is IPv6. Unparseable names resolve to 127.0.0.1 bytes.

    Cached: it is called for every stored message with a handful of distinct hosts."""
    got = _HOST_CACHE.get(host)
    if got is not None:
        return got
    try:
        addr = ipaddress.ip_address(host)
    except ValueError:
        try:
            got = socket.inet_aton(socket.gethostbyname(host)), False
        except OSError:
            got = b"\x7f\x00\x00\x01", False
    else:
        if isinstance(addr, ipaddress.IPv6Address):
            got = (addr.ipv4_mapped.packed, False) if addr.ipv4_mapped is not None else (addr.packed, True)
        else:
            got = addr.packed, False
    if len(_HOST_CACHE) >= _HOST_CACHE_MAX:
        _HOST_CACHE.clear()
    _HOST_CACHE[host] = got
    return got


def host_block_v4(host: tuple[str, int]) -> bytes | None:
    """The 8-byte ``ip + int32 port`` block of an IPv4 host (IPv4-mapped IPv6 counts), or None for a real IPv6
    host. Cached per (ip, port)."""
    block = _HOST_BLOCK_CACHE.get(host)
    if block is None:
        raw, v6 = _host_bytes(host[0])
        if v6:
            return None
        block = HOST4.pack(raw, host[1])
        if len(_HOST_BLOCK_CACHE) >= _HOST_CACHE_MAX:
            _HOST_BLOCK_CACHE.clear()
        _HOST_BLOCK_CACHE[host] = block
    return block


_HOST_STR_CACHE: dict[bytes, str] = {}  # a consumer sees a handful of hosts: decoded once each


def _host_str(raw: bytes) -> str:
    text = _HOST_STR_CACHE.get(raw)
    if text is None:
        text = socket.inet_ntoa(raw) if len(raw) == 4 else str(ipaddress.ip_address(raw))
        if len(_HOST_STR_CACHE) >= _HOST_CACHE_MAX:
            _HOST_STR_CACHE.clear()
        _HOST_STR_CACHE[raw] = text
    return text


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


_PROPERTIES_SLOT: Any = MessageExt.__dict__["properties"]  # the slot under LazyMessageExt's property
_MESSAGE_FIELDS: Final = tuple(f.name for f in fields(MessageExt))


class LazyMessageExt(MessageExt):
    """A ``MessageExt`` whose properties text is split into a dict only when ``properties`` is first read (a push
    consumer's listener often never reads them); ``tags`` and ``msg_id`` read their one property from the text.
    Equality, repr, ``dataclasses.replace`` and pickling go through ``properties`` and see the decoded dict."""

    __slots__ = ("_raw_props",)
    _raw_props: str | None

    def __init__(
        self,
        topic: str,
        body: bytes,
        flag: int = 0,
        properties: dict[str, str] | None = None,
        queue_id: int = 0,
        queue_offset: int = 0,
        commit_log_offset: int = 0,
        sys_flag: int = 0,
        born_timestamp: int = 0,
        born_host: tuple[str, int] = ("127.0.0.1", 0),
        store_timestamp: int = 0,
        store_host: tuple[str, int] = ("127.0.0.1", 0),
        reconsume_times: int = 0,
        prepared_transaction_offset: int = 0,
        body_crc: int = 0,
        store_size: int = 0,
        raw_props: str = "",
    ) -> None:
        """``MessageExt``'s fields, in its order (``dataclasses.replace`` passes them by name); ``properties``
        given as a dict is taken as is, else ``raw_props`` (encoded pairs) is split when first read. Written out,
        not inherited, so the pull-body decode sets the text in the same call, without the ``properties`` setter."""
        self.topic = topic
        self.body = body
        self.flag = flag
        self.queue_id = queue_id
        self.queue_offset = queue_offset
        self.commit_log_offset = commit_log_offset
        self.sys_flag = sys_flag
        self.born_timestamp = born_timestamp
        self.born_host = born_host
        self.store_timestamp = store_timestamp
        self.store_host = store_host
        self.reconsume_times = reconsume_times
        self.prepared_transaction_offset = prepared_transaction_offset
        self.body_crc = body_crc
        self.store_size = store_size
        if properties is None:
            self._raw_props = raw_props
        else:
            self._raw_props = None
            _PROPERTIES_SLOT.__set__(self, properties)

    @property
    def properties(self) -> dict[str, str]:
        raw = self._raw_props
        if raw is None:
            return _PROPERTIES_SLOT.__get__(self)  # type: ignore[no-any-return]
        self._raw_props = None
        props = decode_properties(raw)
        props.pop(STORE_CRC_PROPERTY, None)
        _PROPERTIES_SLOT.__set__(self, props)
        return props

    @properties.setter
    def properties(self, value: dict[str, str]) -> None:
        self._raw_props = None
        _PROPERTIES_SLOT.__set__(self, value)

    @property
    def tags(self) -> str | None:
        raw = self._raw_props
        return self.properties.get(PropertyKey.TAGS) if raw is None else get_property(raw, PropertyKey.TAGS)

    @property
    def msg_id(self) -> str:
        raw = self._raw_props
        uniq = self.properties.get(PropertyKey.UNIQ_KEY) if raw is None else get_property(raw, PropertyKey.UNIQ_KEY)
        return uniq or self.offset_msg_id

    def __eq__(self, other: object) -> bool:
        """Equal to any ``MessageExt`` with the same fields (the dataclass ``__eq__`` wants the same class)."""
        if not isinstance(other, MessageExt):
            return NotImplemented
        return all(getattr(self, name) == getattr(other, name) for name in _MESSAGE_FIELDS)

    __hash__ = None  # type: ignore[assignment]  # mutable, as MessageExt

    def add_properties(self, text: str) -> None:
        """Add the pairs of ``text`` (encoded properties, later ones win) without decoding what is there."""
        raw = self._raw_props
        if raw is None:
            self.properties.update(decode_properties(text))
        else:
            self._raw_props = _append_props(raw, text)


def _append_props(raw: str, text: str) -> str:
    """The encoded pairs of ``text`` after those of ``raw``: straight on when ``raw`` is empty or ends with the
    separator, else after one."""
    if raw and not raw.endswith(PROPERTY_SEPARATOR):
        return raw + PROPERTY_SEPARATOR + text
    return raw + text


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
    """Encode one MAGIC v1 record. Raises ValueError for a topic over 127 bytes or properties over 32767 bytes.

    IPv6 hosts set the sysFlag bits 0x10 / 0x20 and take 16 address bytes; IPv4 (and IPv4-mapped) hosts clear them.
    Note the C++ client reads hosts as IPv4 whatever the flags say: a store serving it should use IPv4 hosts."""
    topic_b = topic.encode() if isinstance(topic, str) else topic
    if isinstance(properties, dict):
        properties = encode_properties(properties)
    props_b = properties.encode() if isinstance(properties, str) else properties
    if len(topic_b) > MAX_TOPIC_BYTES:
        raise ValueError(f"topic is {len(topic_b)} bytes, the limit is {MAX_TOPIC_BYTES}")
    if len(props_b) > MAX_PROPERTIES_BYTES:
        raise ValueError(f"properties are {len(props_b)} bytes, the limit is {MAX_PROPERTIES_BYTES}")
    crc = body_crc(body) if crc is None else crc
    sys_flag &= ~(SYSFLAG_BORNHOST_V6 | SYSFLAG_STOREHOST_V6)
    born_block = host_block_v4(born_host)
    store_block = host_block_v4(store_host)
    tail = [body, U8.pack(len(topic_b)), topic_b, I16.pack(len(props_b)), props_b]
    if born_block is not None and store_block is not None:
        size = FIXED_SIZE_V4 + len(body) + len(topic_b) + len(props_b)
        head = RECORD_HEAD_V4.pack(
            size,
            MAGIC_V1,
            crc,
            queue_id,
            flag,
            queue_offset,
            physical_offset,
            sys_flag,
            born_timestamp,
            born_block,
            store_timestamp,
            store_block,
            reconsume_times,
            prepared_transaction_offset,
            len(body),
        )
        return bytearray(b"".join([head, *tail]))
    if born_block is None:
        sys_flag |= SYSFLAG_BORNHOST_V6
        born = HOST6.pack(_host_bytes(born_host[0])[0], born_host[1])
    else:
        born = born_block
    if store_block is None:
        sys_flag |= SYSFLAG_STOREHOST_V6
        store = HOST6.pack(_host_bytes(store_host[0])[0], store_host[1])
    else:
        store = store_block
    size = FIXED_SIZE_V4 - 16 + len(born) + len(store) + len(body) + len(topic_b) + len(props_b)
    parts = [
        HEAD.pack(size, MAGIC_V1, crc, queue_id, flag, queue_offset, physical_offset, sys_flag, born_timestamp),
        born,
        I64.pack(store_timestamp),
        store,
        MID.pack(reconsume_times, prepared_transaction_offset),
        I32.pack(len(body)),
        *tail,
    ]
    return bytearray(b"".join(parts))


def store_timestamp_pos(sys_flag: int) -> int:
    """Byte position of STORETIMESTAMP in a record with this sysFlag."""
    return POS_STORETIMESTAMP_V4 + (12 if sys_flag & SYSFLAG_BORNHOST_V6 else 0)


class RecordError(ValueError):
    """A record that fails validation (size, magic, CRC, field lengths)."""


def decode_record(
    buf: bytes | bytearray | memoryview,
    pos: int = 0,
    *,
    decompress: bool = False,
    lazy: bool = False,
    extra_props: str = "",
) -> tuple[MessageExt, int]:
    """Decode the record at ``pos``; returns it and the position after it. Raises RecordError on bad bytes.
    ``lazy``: a ``LazyMessageExt``, its properties split only when read, with the encoded pairs of ``extra_props``
    added after the record's own (as ``add_properties`` would)."""
    try:
        (sys_flag,) = I32.unpack_from(buf, pos + POS_SYSFLAG)
        if not sys_flag & (SYSFLAG_BORNHOST_V6 | SYSFLAG_STOREHOST_V6):
            (
                size,
                magic,
                crc,
                queue_id,
                flag,
                queue_offset,
                phys,
                sys_flag,
                born_ts,
                braw,
                bport,
                store_ts,
                sraw,
                sport,
                reconsume,
                prepared,
                blen,
            ) = _DECODE_HEAD_V4.unpack_from(buf, pos)
            p = pos + 88
        else:
            (size, magic, crc, queue_id, flag, queue_offset, phys, sys_flag, born_ts) = HEAD.unpack_from(buf, pos)
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
        if magic != MAGIC_V1 and magic != MAGIC_V2:
            raise RecordError(f"bad magic code {magic} at {pos}")
        end = pos + size
        if size < FIXED_SIZE_V4 or end > len(buf):
            raise RecordError(f"bad record size {size} at {pos}")
        if blen < 0 or p + blen > end:
            raise RecordError(f"bad body length {blen} at {pos}")
        body = bytes(buf[p : p + blen])
        p += blen
        if magic == MAGIC_V1:
            tlen = buf[p]
            p += 1
            if tlen > 127:
                raise RecordError(f"bad topic length {tlen - 256} at {pos}")
        else:
            (tlen,) = I16.unpack_from(buf, p)
            p += 2
            if tlen < 0:
                raise RecordError(f"bad topic length {tlen} at {pos}")
        topic = str(buf[p : p + tlen], "utf-8")
        p += tlen
        (plen,) = I16.unpack_from(buf, p)
        p += 2
        if plen < 0 or p + plen != end:
            raise RecordError(f"record fields do not add up to its size {size} at {pos}")
        props_text = str(buf[p:end], "utf-8") if plen else ""
        if not lazy:
            props = decode_properties(props_text) if plen else {}
            props.pop(STORE_CRC_PROPERTY, None)
    except (struct.error, IndexError) as exc:
        raise RecordError(f"truncated record at {pos}: {exc}") from None
    except UnicodeDecodeError as exc:
        raise RecordError(f"undecodable text in record at {pos}: {exc}") from None
    if decompress and sys_flag & SYSFLAG_COMPRESSED:
        try:
            body = zlib.decompress(body)
        except zlib.error as exc:
            raise RecordError(f"compressed body does not inflate at {pos}: {exc}") from None
    msg = (LazyMessageExt if lazy else MessageExt)(
        topic,
        body,
        flag,
        {} if lazy else props,
        queue_id,
        queue_offset,
        phys,
        sys_flag,
        born_ts,
        (_host_str(braw), bport),
        store_ts,
        (_host_str(sraw), sport),
        reconsume,
        prepared,
        crc,
        size,
    )
    if lazy:
        if extra_props:
            props_text = _append_props(props_text, extra_props)
        if props_text:
            msg._raw_props = props_text  # type: ignore[attr-defined]
    return msg, end


def decode_records(
    buf: bytes | bytearray | memoryview, *, decompress: bool = False, lazy: bool = False, extra_props: str = ""
) -> list[MessageExt]:
    """Decode a PULL / QUERY body: records back to back (``lazy``, ``extra_props``: see ``decode_record``)."""
    if lazy and isinstance(buf, bytes):
        return _decode_records_lazy(buf, decompress, extra_props)
    out: list[MessageExt] = []
    pos = 0
    end = len(buf)
    while pos < end:
        msg, pos = decode_record(buf, pos, decompress=decompress, lazy=lazy, extra_props=extra_props)
        out.append(msg)
    return out


def _decode_records_lazy(buf: bytes, decompress: bool, extra_props: str) -> list[MessageExt]:
    """``decode_records(lazy=True)`` of a pull body (the consumers' hot path): ``decode_record``'s common case — an
    uncompressed V1 record with IPv4 hosts — inline; any other record (and any bad one, to raise its RecordError)
    goes through ``decode_record``. Per record it does as little as it can: the head is one unpack with each host as
    its 8-byte block, looked up in this body's (ip, port) tuples; a topic equal to the previous record's (a pull
    body is one queue's) is that one's string; the message is built in one call."""
    out: list[MessageExt] = []
    add = out.append
    unpack_head = RECORD_HEAD_V4.unpack_from
    unpack_i16 = I16.unpack_from
    make = LazyMessageExt
    hosts: dict[bytes, tuple[str, int]] = {}
    topic_b = b""
    topic = ""
    other = SYSFLAG_BORNHOST_V6 | SYSFLAG_STOREHOST_V6 | (SYSFLAG_COMPRESSED if decompress else 0)
    # extra_props after a record's own (``_append_props``, inlined: the consumers' hot loop)
    joined = PROPERTY_SEPARATOR + extra_props if extra_props else ""
    n = len(buf)
    pos = 0
    while pos < n:
        try:
            (size, magic, crc, queue_id, flag, queue_offset, phys, sys_flag, born_ts,
             bblock, store_ts, sblock, reconsume, prepared, blen) = unpack_head(buf, pos)  # fmt: skip
        except struct.error:
            size = magic = sys_flag = blen = -1
        end = pos + size
        p = pos + 88 + blen  # the topic length
        if (
            magic != MAGIC_V1
            or sys_flag & other
            or size < FIXED_SIZE_V4
            or end > n
            or blen < 0
            or p + 3 > end
            or buf[p] > 127
        ):
            msg, pos = decode_record(buf, pos, decompress=decompress, lazy=True, extra_props=extra_props)
            add(msg)
            continue
        tend = p + 1 + buf[p]
        plen = unpack_i16(buf, tend)[0] if tend + 2 <= end else -1
        if plen < 0 or tend + 2 + plen != end:
            msg, pos = decode_record(buf, pos, decompress=decompress, lazy=True, extra_props=extra_props)
            add(msg)  # not reached: the same checks fail there and raise
            continue
        born = hosts.get(bblock)
        if born is None:
            born = hosts[bblock] = (_host_str(bblock[:4]), I32.unpack_from(bblock, 4)[0])
        stored = hosts.get(sblock)
        if stored is None:
            stored = hosts[sblock] = (_host_str(sblock[:4]), I32.unpack_from(sblock, 4)[0])
        try:
            tb = buf[p + 1 : tend]
            if tb != topic_b:
                topic_b = tb
                topic = tb.decode()
            if not plen:
                props_text = extra_props
            elif buf[end - 1] == 2 or not extra_props:  # ends with PROPERTY_SEPARATOR (or nothing to add)
                props_text = buf[tend + 2 : end].decode() + extra_props
            else:
                props_text = buf[tend + 2 : end].decode() + joined
        except UnicodeDecodeError:
            topic_b = b""
            msg, pos = decode_record(buf, pos, decompress=decompress, lazy=True, extra_props=extra_props)
            add(msg)  # not reached: decode_record raises
            continue
        msg = make(
            topic, buf[p - blen : p], flag, None, queue_id, queue_offset, phys, sys_flag, born_ts, born,
            store_ts, stored, reconsume, prepared, crc, size, props_text,
        )  # fmt: skip
        add(msg)
        pos = end
    return out


def record_properties(buf: bytes | bytearray | memoryview, pos: int = 0) -> str:
    """The properties string of the (valid) record at ``pos``, without decoding anything else — for exact tag checks
    and record filters on the read path."""
    (size,) = I32.unpack_from(buf, pos)
    (sys_flag,) = I32.unpack_from(buf, pos + POS_SYSFLAG)
    p = pos + POS_BODYLEN_V4
    if sys_flag & SYSFLAG_BORNHOST_V6:
        p += 12
    if sys_flag & SYSFLAG_STOREHOST_V6:
        p += 12
    (blen,) = I32.unpack_from(buf, p)
    p += 4 + blen
    p += 1 + buf[p] + 2
    return str(buf[p : pos + size], "utf-8")


def record_tags(buf: bytes | bytearray | memoryview, pos: int = 0) -> str | None:
    """The TAGS property of the record at ``pos`` (None when absent or the record is unreadable)."""
    try:
        return get_property(record_properties(buf, pos), PropertyKey.TAGS)
    except (struct.error, IndexError, UnicodeDecodeError):
        return None


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
    """Uppercase hex of ``ip bytes + int32 port + int64 offset`` (32 chars for IPv4, 56 for IPv6)."""
    raw, _v6 = _host_bytes(ip)
    return (raw + I32.pack(port) + I64.pack(commit_log_offset)).hex().upper()


def offset_msg_id_prefix(ip: str, port: int) -> str:
    """The host part of every offset msgId of a store: ``prefix + f"{offset:016X}"`` is the full id."""
    raw, _v6 = _host_bytes(ip)
    return (raw + I32.pack(port)).hex().upper()


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
    """A J-style client message id (MessageClientIDSetter): hex of ip(4) + pid(int16) + hash(int32) + ms since the
    start of the month(int32) + counter(int16), 32 uppercase hex chars."""
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


def create_uniq_ids(n: int) -> list[str]:
    """``n`` ids as ``create_uniq_id`` makes them, one clock reading for all (a batch's messages): ids made within
    the same millisecond, each with its own counter value."""
    first = create_uniq_id()
    if n <= 1:
        return [first] if n == 1 else []
    head = first[:-4]
    count = _uniq_counter
    return [first, *[f"{head}{next(count) & 0xFFFF:04X}" for _ in range(n - 1)]]


# -- batch body ------------------------------------------------------------------------------------------------------

_BATCH_HEAD: Final = struct.Struct(">iiiii")  # totalSize, magic, bodyCRC, flag, bodyLen
assert _BATCH_HEAD.size == 20


class BatchItem:
    """One message of a SEND_BATCH_MESSAGE body (topic and queue come from the request header).

    Its properties exist as the properties string (``text``: what the wire carries and the store writes verbatim)
    and as a dict (``properties``); each is made from the other on first use, so the broker's batch path —
    ``decode_batch`` then the store — never parses and re-encodes them. Build one with either; do not mutate the
    dict after ``text`` was read."""

    __slots__ = ("_props", "_text", "body", "flag")

    def __init__(
        self, body: bytes, properties: dict[str, str] | None = None, flag: int = 0, *, text: str | None = None
    ) -> None:
        self.body = body
        self.flag = flag
        self._props = properties if properties is not None or text is not None else {}
        self._text = text

    @property
    def properties(self) -> dict[str, str]:
        props = self._props
        if props is None:
            props = self._props = decode_properties(self._text or "")
        return props

    @properties.setter
    def properties(self, props: dict[str, str]) -> None:
        self._props = props
        self._text = None

    @property
    def text(self) -> str:
        """The properties string (``name\\x01value\\x02`` pairs)."""
        text = self._text
        if text is None:
            text = self._text = encode_properties(self._props or {})
        return text

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, BatchItem):
            return NotImplemented
        return self.body == other.body and self.flag == other.flag and self.properties == other.properties

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"BatchItem(body={self.body!r}, properties={self.properties!r}, flag={self.flag})"


def encode_batch(items: Iterable[BatchItem | tuple[int, bytes, dict[str, str]]]) -> bytes:
    """The SEND_BATCH_MESSAGE body: ``BatchItem``s or ``(flag, body, properties)`` tuples."""
    return encode_batch_texts(
        (it.flag, it.body, it.text) if isinstance(it, BatchItem) else (it[0], it[1], encode_properties(it[2]))
        for it in items
    )


def encode_batch_texts(items: Iterable[tuple[int, bytes, str]]) -> bytes:
    """The SEND_BATCH_MESSAGE body from ``(flag, body, properties string)`` items: the producer's batch path, with
    no BatchItem or properties dict per message."""
    parts: list[bytes] = []
    add = parts.extend
    pack_head = _BATCH_HEAD.pack
    pack_len = I16.pack
    for flag, data, text in items:
        props = text.encode()
        plen = len(props)
        blen = len(data)
        add((pack_head(22 + blen + plen, 0, 0, flag, blen), data, pack_len(plen), props))
    return b"".join(parts)


def decode_batch(body: bytes | bytearray | memoryview) -> list[BatchItem]:
    """Unpack a SEND_BATCH_MESSAGE body; RecordError on inconsistent lengths or properties that are not UTF-8.
    Each item keeps its properties string as received (parsed only if ``properties`` is read)."""
    out: list[BatchItem] = []
    add = out.append
    unpack_head = _BATCH_HEAD.unpack_from
    unpack_len = I16.unpack_from
    item = BatchItem
    if not isinstance(body, bytes):
        body = bytes(body)  # one copy; slices of bytes are the items' own bytes
    pos = 0
    end = len(body)
    try:
        while pos < end:
            total, _magic, _crc, flag, blen = unpack_head(body, pos)
            nxt = pos + total
            p = pos + 20 + blen  # the properties length
            if total < 22 or nxt > end or blen < 0 or p + 2 > nxt:
                raise RecordError(f"bad batch entry at {pos}")
            plen = unpack_len(body, p)[0]
            if plen < 0 or p + 2 + plen != nxt:
                raise RecordError(f"bad batch entry properties at {pos}")
            add(item(body[pos + 20 : p], None, flag, text=str(body[p + 2 : nxt], "utf-8") if plen else ""))
            pos = nxt
    except struct.error as exc:
        raise RecordError(f"truncated batch entry at {pos}: {exc}") from None
    except UnicodeDecodeError as exc:
        raise RecordError(f"undecodable batch properties at {pos}: {exc}") from None
    return out
