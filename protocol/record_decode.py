"""Decoding commit-log records (``protocol.record``'s layout) into messages: ``decode_record`` for one,
``decode_records`` for a PULL / QUERY body, eager (``MessageExt``) or lazy (``LazyMessageExt``, the push consumers'
hot path, with the common record — uncompressed, MAGIC v1, IPv4 hosts — decoded inline). Bad bytes raise
``RecordError``; a compressed body is inflated on request. The store's seal property is dropped.
"""

from __future__ import annotations

import struct
import zlib

from protocol.message_ext import LazyMessageExt, MessageExt
from protocol.message_properties import PROPERTY_SEPARATOR, append_properties, decode_properties
from protocol.record import (
    DECODE_HEAD_V4,
    FIXED_SIZE_V4,
    HEAD,
    HOST4,
    HOST6,
    I16,
    I32,
    I64,
    MAGIC_V1,
    MAGIC_V2,
    MID,
    POS_SYSFLAG,
    RECORD_HEAD_V4,
    STORE_CRC_PROPERTY,
    SYSFLAG_BORNHOST_V6,
    SYSFLAG_COMPRESSED,
    SYSFLAG_STOREHOST_V6,
    RecordError,
    host_str,
)


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
            ) = DECODE_HEAD_V4.unpack_from(buf, pos)
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
        (host_str(braw), bport),
        store_ts,
        (host_str(sraw), sport),
        reconsume,
        prepared,
        crc,
        size,
    )
    if lazy:
        if extra_props:
            props_text = append_properties(props_text, extra_props)
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
            born = hosts[bblock] = (host_str(bblock[:4]), I32.unpack_from(bblock, 4)[0])
        stored = hosts.get(sblock)
        if stored is None:
            stored = hosts[sblock] = (host_str(sblock[:4]), I32.unpack_from(sblock, 4)[0])
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
