"""The commit-log record: one table of its layout, the encoders (``encode_message`` of a ``RecordMessage`` — the
broker's put request is one — at a ``RecordPlace``, ``encode_record`` field by field, and ``encode_record_v4``, the
inline fast path the store's put path uses), the field offsets and readers everyone walks records with, and the
validation recovery runs. The same bytes are the body of PULL / VIEW / QUERY replies (decoding them into messages:
``protocol.record_decode``). Pure: no IO, no name lookup, no clock.

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

Seal (the broker store's whole-record CRC): the last property ``__CRC32#`` (``STORE_CRC_PROPERTY``) whose value is
ten decimal digits, the CRC-32 of the record without those digits and their ``\\x02``; decoders drop it.
"""

from __future__ import annotations

import ipaddress
import socket
import struct
from dataclasses import dataclass
from typing import Final

from protocol.crc import crc32
from protocol.message_properties import NAME_VALUE_SEPARATOR, PropertyKey, encode_properties, get_property

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
# the seal as it is written: the property name and its separator, then SEAL_DIGITS_LEN decimal digits and \x02
SEAL_PREFIX: Final = (STORE_CRC_PROPERTY + NAME_VALUE_SEPARATOR).encode()
SEAL_DIGITS_LEN: Final = 10

MAX_TOPIC_BYTES: Final = 127
MAX_PROPERTIES_BYTES: Final = 32767

# Fixed-layout prefix up to and including BORNTIMESTAMP (fields 1-9), 48 bytes.
HEAD: Final = struct.Struct(">iiiiiqqiq")
assert HEAD.size == 48
# Fields 1-15 of a record whose hosts are both IPv4, each host as one 8-byte block (ip(4) + port int32): the
# encoder's single pack. TOTALSIZE MAGIC BODYCRC QUEUEID FLAG QUEUEOFFSET PHYSICALOFFSET SYSFLAG BORNTIMESTAMP
# BORNHOST STORETIMESTAMP STOREHOST RECONSUMETIMES PREPARED_TRANSACTION_OFFSET BODYLEN.
RECORD_HEAD_V4: Final = struct.Struct(">iiiiiqqiq8sq8siqi")
assert RECORD_HEAD_V4.size == 88
# The same 88 bytes with hosts split into ip / port, for decoding.
DECODE_HEAD_V4: Final = struct.Struct(">iiiiiqqiq4siq4siiqi")
assert DECODE_HEAD_V4.size == 88
# Prefixes of the head, for readers that need only its first fields.
SIZE_MAGIC: Final = struct.Struct(">ii")  # TOTALSIZE, MAGICCODE (also the head of the blank filler)
SIZE_MAGIC_CRC: Final = struct.Struct(">iii")  # TOTALSIZE, MAGICCODE, BODYCRC
HEAD_TO_QUEUEOFFSET: Final = struct.Struct(">iiiiiq")  # TOTALSIZE MAGICCODE BODYCRC QUEUEID FLAG QUEUEOFFSET
assert HEAD_TO_QUEUEOFFSET.size == 28
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
POS_STOREHOST_V4: Final = 64  # with an IPv4 born host
POS_RECONSUMETIMES_V4: Final = 72  # with IPv4 born and store hosts
POS_PREPARED_TRANSACTION_OFFSET_V4: Final = 76  # with IPv4 born and store hosts
POS_BODYLEN_V4: Final = 84  # with IPv4 born and store hosts
FIXED_SIZE_V4: Final = 91  # record size with IPv4 hosts and empty body, topic and properties

_pack_head_v4 = RECORD_HEAD_V4.pack
_pack_i16 = I16.pack
BLANK: Final = -1  # check_record's answer for an end-of-file filler
# A seal's ten digits as three table entries (a CRC-32 is below 43 * 10**8): ~230 ns less per record than
# formatting them (``b"%010d" % crc``), compiled; the tables take ~0.4 MB.
_DIGITS2: Final = [b"%02d" % i for i in range(100)]
_DIGITS4: Final = [b"%04d" % i for i in range(10_000)]
_SEAL_END: Final = b"\x02"


def transaction_type(sys_flag: int) -> int:
    return sys_flag & TRANSACTION_ROLLBACK_TYPE


def reset_transaction_type(sys_flag: int, tran_type: int) -> int:
    return (sys_flag & ~TRANSACTION_ROLLBACK_TYPE) | tran_type


def body_crc(body: bytes | bytearray | memoryview) -> int:
    return crc32(body) & 0x7FFFFFFF


class RecordError(ValueError):
    """A record that fails validation (size, magic, CRC, field lengths)."""


_HOST_CACHE: dict[str, tuple[bytes, bool]] = {}
_HOST_BLOCK_CACHE: dict[tuple[str, int], bytes] = {}
_HOST_CACHE_MAX: Final = 4096


def host_bytes(host: str) -> tuple[bytes, bool]:
    """Packed address bytes of an IP address and whether it is IPv6 (an IPv4-mapped IPv6 address counts as IPv4).
    Anything that is not an IP address packs as 127.0.0.1: the codec does no name lookup, callers that take host
    names resolve them first (``runtime.host.resolve_ip``).

    Cached: it is called for every stored message with a handful of distinct hosts."""
    got = _HOST_CACHE.get(host)
    if got is not None:
        return got
    try:
        addr = ipaddress.ip_address(host)
    except ValueError:
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
        raw, v6 = host_bytes(host[0])
        if v6:
            return None
        block = HOST4.pack(raw, host[1])
        if len(_HOST_BLOCK_CACHE) >= _HOST_CACHE_MAX:
            _HOST_BLOCK_CACHE.clear()
        _HOST_BLOCK_CACHE[host] = block
    return block


_HOST_STR_CACHE: dict[bytes, str] = {}  # a consumer sees a handful of hosts: decoded once each


def host_str(raw: bytes) -> str:
    """The text of packed IPv4 (4 bytes) or IPv6 (16 bytes) address bytes."""
    text = _HOST_STR_CACHE.get(raw)
    if text is None:
        text = socket.inet_ntoa(raw) if len(raw) == 4 else str(ipaddress.ip_address(raw))
        if len(_HOST_STR_CACHE) >= _HOST_CACHE_MAX:
            _HOST_STR_CACHE.clear()
        _HOST_STR_CACHE[raw] = text
    return text


def encode_record_v4(
    size: int,
    crc: int,
    queue_id: int,
    flag: int,
    queue_offset: int,
    physical_offset: int,
    sys_flag: int,
    born_timestamp: int,
    born_block: bytes,
    store_timestamp: int,
    store_block: bytes,
    reconsume_times: int,
    prepared_transaction_offset: int,
    body: bytes,
    topic_block: bytes,
    props: bytes,
    seal: bytes = b"",
) -> bytes:
    """The inline fast path: one MAGIC v1 record with IPv4 hosts, fields 1-15 packed by one ``struct`` call
    (``RECORD_HEAD_V4``) and the rest joined once. The put path of the store calls it per message with values it
    already holds (``encode_message`` builds the same bytes field by field). Nothing is checked here.

    ``size`` is the whole record, ``FIXED_SIZE_V4 - 1 + len(topic_block) + len(body) + len(props)``, plus
    ``len(seal) + SEAL_DIGITS_LEN + 1`` when sealed; ``crc`` is ``crc32(body)`` (unmasked: the seal continues it);
    ``born_block`` / ``store_block`` are ``host_block_v4`` blocks; ``topic_block`` is ``int8 length + topic``;
    ``props`` the encoded properties. ``seal``: empty, or the seal's name (``SEAL_PREFIX``, after a ``\\x02`` when
    ``props`` does not end with one) — the record then ends with the CRC-32 of the record without its digits,
    continued from ``crc`` over the head and the tail, as ten decimal digits and ``\\x02``."""
    plen = len(props) + len(seal) + SEAL_DIGITS_LEN + 1 if seal else len(props)
    head = _pack_head_v4(
        size, MAGIC_V1, crc & 0x7FFFFFFF, queue_id, flag, queue_offset, physical_offset, sys_flag, born_timestamp,
        born_block, store_timestamp, store_block, reconsume_times, prepared_transaction_offset, len(body),
    )  # fmt: skip
    if seal:
        tail = b"".join((topic_block, _pack_i16(plen), props, seal))
        c = crc32(tail, crc32(head, crc))
        d4 = _DIGITS4
        return b"".join(
            (head, body, tail, _DIGITS2[c // 100_000_000], d4[c // 10_000 % 10_000], d4[c % 10_000], _SEAL_END)
        )
    return b"".join((head, body, topic_block, _pack_i16(plen), props))


@dataclass(slots=True)
class RecordRun:
    """What the records of one batch append share (``encode_records_v4``): one queue, sysFlag, born time and host,
    store time and host (``host_block_v4`` blocks) and topic (``int8 length + topic``); the first record's queue
    offset and commit-log offset (``queue_step`` 1 per record, or 0 for records not dispatched)."""

    queue_id: int
    queue_offset: int
    queue_step: int
    physical_offset: int
    sys_flag: int
    born_timestamp: int
    born_block: bytes
    store_timestamp: int
    store_block: bytes
    topic_block: bytes


def encode_records_v4(
    run: RecordRun, src: bytes, spans: list[int], flags: list[int], sizes: list[int], seals: list[bytes]
) -> bytes:
    """``encode_record_v4`` in a loop form for a batch: the same bytes for each record, back to back, joined once.
    Record ``i`` has its body at ``src[spans[3i] : spans[3i+1] - 2]`` and its properties at
    ``src[spans[3i+1] : spans[3i+2]]`` (``protocol.batch.BatchView``'s spans), flag ``flags[i]``, size ``sizes[i]``
    and seal ``seals[i]`` (as ``encode_record_v4``'s ``seal``); reconsume times and prepared-transaction offset 0.
    Per record: one head ``pack``, one join of its tail, the seal's CRC continued over head and tail without
    concatenating them, its digits looked up (``_DIGITS2`` / ``_DIGITS4``), not formatted; the body is copied only
    by the final join. Nothing is checked here."""
    parts: list[bytes | memoryview] = []
    add = parts.extend
    mv = memoryview(src)
    topic_block = run.topic_block
    queue_id, sys_flag, born_timestamp, born_block = run.queue_id, run.sys_flag, run.born_timestamp, run.born_block
    now, store_block, qoff, step = run.store_timestamp, run.store_block, run.queue_offset, run.queue_step
    phys = run.physical_offset
    pack_head = _pack_head_v4
    pack_i16 = _pack_i16
    d2 = _DIGITS2
    d4 = _DIGITS4
    for i in range(len(flags)):
        bs = spans[3 * i]
        ps = spans[3 * i + 1]
        pe = spans[3 * i + 2]
        body = mv[bs : ps - 2]
        crc = crc32(body)
        size = sizes[i]
        head = pack_head(
            size, MAGIC_V1, crc & 0x7FFFFFFF, queue_id, flags[i], qoff, phys, sys_flag, born_timestamp, born_block,
            now, store_block, 0, 0, ps - 2 - bs,
        )  # fmt: skip
        seal = seals[i]
        if seal:
            # the properties as a bytes slice (cheaper than a memoryview's); the seal's digits from the tables
            tail = b"".join((topic_block, pack_i16(pe - ps + len(seal) + SEAL_DIGITS_LEN + 1), src[ps:pe], seal))
            c = crc32(tail, crc32(head, crc))
            add((head, body, tail, d2[c // 100_000_000], d4[c // 10_000 % 10_000], d4[c % 10_000], _SEAL_END))
        else:
            add((head, body, topic_block, pack_i16(pe - ps), src[ps:pe]))
        phys += size
        qoff += step
    return b"".join(parts)


class RecordMessage:
    """The fields of a record that its sender gives (the store adds the queue offset, the physical offset, the
    store time and host): what ``encode_message`` encodes. The broker's ``PutRequest`` is one, so a put is encoded
    from the request itself. ``born_host`` is ``(ip, port)`` or ``"ip:port"`` / ``"[v6]:port"``; ``properties``
    the properties string or a dict."""

    __slots__ = (
        "body",
        "born_host",
        "born_timestamp",
        "flag",
        "prepared_transaction_offset",
        "properties",
        "queue_id",
        "reconsume_times",
        "sys_flag",
        "topic",
    )

    def __init__(
        self,
        topic: str,
        queue_id: int,
        flag: int,
        sys_flag: int,
        born_timestamp: int,
        born_host: str | tuple[str, int],
        body: bytes,
        properties: str | dict[str, str],
        reconsume_times: int = 0,
        prepared_transaction_offset: int = 0,
    ) -> None:
        self.topic = topic
        self.queue_id = queue_id
        self.flag = flag
        self.sys_flag = sys_flag
        self.born_timestamp = born_timestamp
        self.born_host = born_host
        self.body = body
        self.properties = properties
        self.reconsume_times = reconsume_times
        self.prepared_transaction_offset = prepared_transaction_offset


def split_host(host: str | tuple[str, int]) -> tuple[str, int]:
    """``("ip", port)`` from a tuple or an ``"ip:port"`` / ``"[v6]:port"`` string."""
    if isinstance(host, tuple):
        return host
    h, _, p = host.rpartition(":")
    if not h:
        return host, 0
    if h.startswith("[") and h.endswith("]"):
        h = h[1:-1]
    try:
        return h, int(p)
    except ValueError:
        return h, 0


@dataclass(slots=True)
class RecordPlace:
    """What the store gives a record as it appends it (the rest is the sender's ``RecordMessage``): the queue
    offset, the commit-log offset, the store time and host; ``props`` the properties bytes it writes (None: the
    message's properties encoded), ``crc`` a body CRC it already knows (None: computed); ``seal``: end the record
    with the whole-record CRC seal (``SEAL_PREFIX`` as its last property, as ``encode_record_v4`` writes it)."""

    queue_offset: int = 0
    physical_offset: int = 0
    store_timestamp: int = 0
    store_host: tuple[str, int] = ("127.0.0.1", 0)
    props: bytes | None = None
    crc: int | None = None
    seal: bool = False


def encode_message(msg: RecordMessage, place: RecordPlace) -> bytearray:
    """Encode ``msg`` as one MAGIC v1 record at ``place`` (the store's offsets, time and host). Raises ValueError
    for a topic over 127 bytes or properties over 32767 bytes.

    IPv6 hosts set the sysFlag bits 0x10 / 0x20 and take 16 address bytes; IPv4 (and IPv4-mapped) hosts clear them.
    Note the C++ client reads hosts as IPv4 whatever the flags say: a store serving it should use IPv4 hosts."""
    props = place.props
    store_host = place.store_host
    topic_b = msg.topic.encode()
    if props is None:
        properties = msg.properties
        props = (properties if isinstance(properties, str) else encode_properties(properties)).encode()
    sealed = place.seal
    plen = len(props)
    if sealed:  # the seal's name after the properties (a separator first when they do not end with one)
        props = props + SEAL_PREFIX if not props or props[-1] == 2 else props + b"\x02" + SEAL_PREFIX
        plen = len(props) + SEAL_DIGITS_LEN + 1
    if len(topic_b) > MAX_TOPIC_BYTES:
        raise ValueError(f"topic is {len(topic_b)} bytes, the limit is {MAX_TOPIC_BYTES}")
    if plen > MAX_PROPERTIES_BYTES:
        raise ValueError(f"properties are {plen} bytes, the limit is {MAX_PROPERTIES_BYTES}")
    body = msg.body
    crc = place.crc
    if crc is None:
        crc = crc32(body)
    sys_flag = msg.sys_flag & ~(SYSFLAG_BORNHOST_V6 | SYSFLAG_STOREHOST_V6)
    born_host = split_host(msg.born_host)
    born_block = host_block_v4(born_host)
    store_block = host_block_v4(store_host)
    if born_block is None:
        sys_flag |= SYSFLAG_BORNHOST_V6
        born = HOST6.pack(host_bytes(born_host[0])[0], born_host[1])
    else:
        born = born_block
    if store_block is None:
        sys_flag |= SYSFLAG_STOREHOST_V6
        store = HOST6.pack(host_bytes(store_host[0])[0], store_host[1])
    else:
        store = store_block
    size = FIXED_SIZE_V4 - 16 + len(born) + len(store) + len(body) + len(topic_b) + plen
    head = b"".join((
        HEAD.pack(
            size, MAGIC_V1, crc & 0x7FFFFFFF, msg.queue_id, msg.flag, place.queue_offset, place.physical_offset,
            sys_flag, msg.born_timestamp,
        ),
        born,
        I64.pack(place.store_timestamp),
        store,
        MID.pack(msg.reconsume_times, msg.prepared_transaction_offset),
        I32.pack(len(body)),
    ))  # fmt: skip
    tail = b"".join((U8.pack(len(topic_b)), topic_b, I16.pack(plen), props))
    if sealed:  # the CRC of the record without its digits: the body's, continued over the head and the tail
        return bytearray(b"".join((head, body, tail, b"%010d\x02" % crc32(head + tail, crc))))
    return bytearray(b"".join((head, body, tail)))


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
    """``encode_message`` of a record given field by field (tools, tests, a stored message re-encoded)."""
    msg = RecordMessage(
        topic.decode() if isinstance(topic, bytes) else topic, queue_id, flag, sys_flag, born_timestamp, born_host,
        body, "", reconsume_times, prepared_transaction_offset,
    )  # fmt: skip
    if isinstance(properties, dict):
        properties = encode_properties(properties)
    props = properties.encode() if isinstance(properties, str) else properties
    return encode_message(msg, RecordPlace(queue_offset, physical_offset, store_timestamp, store_host, props, crc))


def store_timestamp_pos(sys_flag: int) -> int:
    """Byte position of STORETIMESTAMP in a record with this sysFlag."""
    return POS_STORETIMESTAMP_V4 + (12 if sys_flag & SYSFLAG_BORNHOST_V6 else 0)


def body_bounds(buf: bytes | bytearray | memoryview, pos: int = 0) -> tuple[int, int]:
    """(body start, body length) of the record at ``pos``: absolute positions, either host IPv4 or IPv6."""
    (sys_flag,) = I32.unpack_from(buf, pos + POS_SYSFLAG)
    p = pos + POS_BODYLEN_V4
    if sys_flag & SYSFLAG_BORNHOST_V6:
        p += 12
    if sys_flag & SYSFLAG_STOREHOST_V6:
        p += 12
    (blen,) = I32.unpack_from(buf, p)
    return p + 4, int(blen)


def record_size(buf: bytes | bytearray | memoryview, pos: int = 0) -> int:
    """TOTALSIZE of the record (or the blank filler) at ``pos``."""
    return int(I32.unpack_from(buf, pos)[0])


def record_physical_offset(buf: bytes | bytearray | memoryview, pos: int = 0) -> int:
    """PHYSICALOFFSET of the record at ``pos``: the commit-log offset it was stored at."""
    return int(I64.unpack_from(buf, pos + POS_PHYSICALOFFSET)[0])


def record_store_timestamp(buf: bytes | bytearray | memoryview, pos: int = 0) -> int:
    """STORETIMESTAMP (ms) of the record at ``pos``."""
    (sys_flag,) = I32.unpack_from(buf, pos + POS_SYSFLAG)
    return int(I64.unpack_from(buf, pos + store_timestamp_pos(sys_flag))[0])


def last_physical_offset(buf: bytes | bytearray | memoryview) -> int:
    """PHYSICALOFFSET of the last record of records back to back (a PULL body)."""
    pos = last = 0
    while pos < len(buf):
        last = pos
        (size,) = I32.unpack_from(buf, pos)
        if size <= 0:
            break
        pos += size
    return record_physical_offset(buf, last)


@dataclass(frozen=True, slots=True)
class IndexFields:
    """What building consume queues and the index needs of a record (``index_fields``)."""

    topic: str
    queue_id: int
    queue_offset: int
    sys_flag: int
    store_timestamp: int
    properties: str


def index_fields(buf: bytes | bytearray | memoryview, pos: int = 0) -> IndexFields:
    """The topic, queue, queue offset, sysFlag, store time and properties of the (valid) record at ``pos``."""
    (sys_flag,) = I32.unpack_from(buf, pos + POS_SYSFLAG)
    (queue_id,) = I32.unpack_from(buf, pos + POS_QUEUEID)
    (queue_offset,) = I64.unpack_from(buf, pos + POS_QUEUEOFFSET)
    (store_ts,) = I64.unpack_from(buf, pos + store_timestamp_pos(sys_flag))
    p, blen = body_bounds(buf, pos)
    p += blen
    tlen = buf[p]
    topic = str(buf[p + 1 : p + 1 + tlen], "utf-8")
    p += 1 + tlen
    (plen,) = I16.unpack_from(buf, p)
    return IndexFields(topic, queue_id, queue_offset, sys_flag, store_ts, str(buf[p + 2 : p + 2 + plen], "utf-8"))


def record_properties(buf: bytes | bytearray | memoryview, pos: int = 0) -> str:
    """The properties string of the (valid) record at ``pos``, without decoding anything else — for exact tag checks
    and record filters on the read path."""
    (size,) = I32.unpack_from(buf, pos)
    p, blen = body_bounds(buf, pos)
    p += blen
    p += 1 + buf[p] + 2
    return str(buf[p : pos + size], "utf-8")


def record_tags(buf: bytes | bytearray | memoryview, pos: int = 0) -> str | None:
    """The TAGS property of the record at ``pos`` (None when absent or the record is unreadable)."""
    try:
        return get_property(record_properties(buf, pos), PropertyKey.TAGS)
    except (struct.error, IndexError, UnicodeDecodeError):
        return None


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
    p, blen = body_bounds(buf, pos)
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
