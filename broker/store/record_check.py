"""Whole-record checksums: the CRC trailer every record written by this store carries, and the full validation
recovery and the read path run on a stored record.

RocketMQ 4.x's BODYCRC covers the body only, so a flipped header or properties byte goes unnoticed. Like RocketMQ
5's ``AppendPropCRC``, the whole-record checksum travels as the *last property* of the record, so the MAGIC v1
layout — and with it the PULL body the official clients parse — does not change (a client sees one more property,
``__CRC32#``, which every client ignores). The properties string of a sealed record ends with this 20-byte trailer:

    | offset from record end | bytes | content                                                             |
    |------------------------|-------|---------------------------------------------------------------------|
    | -20                    | 9     | ``__CRC32#`` + ``\\x01`` (name, NAME_VALUE_SEPARATOR)                 |
    | -11                    | 10    | the record CRC, unsigned, as 10 ASCII decimal digits, zero-padded   |
    | -1                     | 1     | ``\\x02`` (PROPERTY_SEPARATOR)                                        |

(a ``\\x02`` is inserted before it when the producer's properties string does not end with one).

Record CRC = CRC-32 (zlib) over ``body ‖ bytes [0, body) ‖ bytes [body end, record end - 11)``: the body first, so
the put path reuses the body CRC it computes anyway (BODYCRC = that CRC & 0x7FFFFFFF) and pays only for the ~100
header, topic and properties bytes; the BODYCRC field, every length and the trailer's name are all covered.

Records without the trailer (written before this store sealed records, or whose properties leave no room for it)
are checked as RocketMQ 4.x does (magic, sizes, body CRC) plus: topic and properties must be valid UTF-8. How hard a
missing trailer is looked at depends on where the record lies (``sealed_ranges``: the ``require_seal`` level):
LENIENT, not at all; GUARDED (after ``crc_since``, where a non-sealing writer may have appended), a record whose
last 20 bytes are a trailer with one to four bytes of its name changed — or more, its shape intact — is damage;
STRICT (where this store itself appended sealed records), any record with room for the trailer and none is damage.
"""

from __future__ import annotations

import struct
from typing import Final

from broker.store.sealed_ranges import LENIENT, STRICT
from protocol.crc import crc32
from protocol.record import (
    BLANK,
    HEAD_TO_QUEUEOFFSET,
    MAGIC_V1,
    MAX_PROPERTIES_BYTES,
    SEAL_DIGITS_LEN,
    SEAL_PREFIX,
    SIZE_MAGIC_CRC,
    RecordError,
    body_bounds,
    check_record,
)

TRAILER_PREFIX: Final = SEAL_PREFIX  # b"__CRC32#\x01"
DIGITS_LEN: Final = SEAL_DIGITS_LEN
TRAILER_LEN: Final = 20
assert len(TRAILER_PREFIX) + DIGITS_LEN + 1 == TRAILER_LEN
# properties longer than this cannot take the trailer (plus a possible separator) within the int16 length
MAX_SEALABLE_PROPERTIES: Final = MAX_PROPERTIES_BYTES - TRAILER_LEN - 1
_MIN_SEALED: Final = 91 + TRAILER_LEN
_crc32 = crc32


def record_crc(buf: bytes | bytearray | memoryview, pos: int, size: int) -> int:
    """The record CRC of the record at ``pos`` (what its trailer's digits must say). The writers compute the same
    CRC as they encode (``protocol.record``: ``encode_record_v4`` and ``encode_message`` seal the records)."""
    mv = memoryview(buf)
    start, blen = body_bounds(mv, pos)
    c = _crc32(mv[start : start + blen])
    c = _crc32(mv[pos:start], c)
    return _crc32(mv[start + blen : pos + size - DIGITS_LEN - 1], c)


def _props_bounds(buf: bytes | bytearray | memoryview, pos: int, size: int) -> tuple[int, int, int]:
    """(topic start, topic length, properties start) of a record ``check_record`` accepted."""
    start, blen = body_bounds(buf, pos)
    t = start + blen
    tlen = buf[t]
    p = t + 1 + tlen
    return t + 1, tlen, p + 2


def is_sealed(buf: bytes | bytearray | memoryview, pos: int, size: int) -> bool:
    end = pos + size
    return size >= 91 + TRAILER_LEN and buf[end - TRAILER_LEN : end - DIGITS_LEN - 1] == TRAILER_PREFIX


def verify(buf: bytes | bytearray | memoryview, pos: int, *, require_seal: int = LENIENT) -> int:
    """Validate the record at ``pos`` completely. Returns its size, or ``BLANK`` for an end-of-file filler; raises
    RecordError saying what is wrong (torn, garbled, CRC mismatch, undecodable text, missing seal).

    A sealed record takes the fast path: the record CRC covers every length field, so once it matches, the layout
    is the one the writer produced and no field-by-field walk is needed."""
    try:
        size, magic, bcrc = SIZE_MAGIC_CRC.unpack_from(buf, pos)
    except struct.error:  # maybe an 8-byte blank filler at the very end of a file: check_record decides
        size = magic = bcrc = 0
    end = pos + size
    if magic == MAGIC_V1 and size >= _MIN_SEALED and end <= len(buf):
        mv = memoryview(buf)
        if mv[end - TRAILER_LEN : end - DIGITS_LEN - 1] == TRAILER_PREFIX:
            start, blen = body_bounds(mv, pos)
            if blen >= 0 and start + blen <= end - TRAILER_LEN:
                c = _crc32(mv[start : start + blen])
                if c & 0x7FFFFFFF == bcrc:
                    c = _crc32(mv[start + blen : end - DIGITS_LEN - 1], _crc32(mv[pos:start], c))
                    raw = bytes(mv[end - DIGITS_LEN - 1 : end])
                    if raw[:DIGITS_LEN].isdigit() and raw[-1] == 2 and int(raw[:DIGITS_LEN]) == c:
                        return int(size)
            raise RecordError(f"record CRC mismatch at {pos}")
    size = check_record(buf, pos, check_crc=True)
    if size == BLANK:
        return BLANK
    end = pos + size
    if is_sealed(buf, pos, size):
        raw = bytes(buf[end - DIGITS_LEN - 1 : end])
        if not raw[:DIGITS_LEN].isdigit() or raw[-1:] != b"\x02":
            raise RecordError(f"record CRC digits garbled at {pos}")
        if int(raw[:DIGITS_LEN]) != record_crc(buf, pos, size):
            raise RecordError(f"record CRC mismatch at {pos}")
        return size
    t, tlen, p = _props_bounds(buf, pos, size)
    if require_seal >= STRICT and end - p <= MAX_SEALABLE_PROPERTIES:
        raise RecordError(f"record CRC trailer missing at {pos} (this store sealed every record there)")
    if require_seal and end - p >= TRAILER_LEN and _damaged_seal(bytes(buf[end - TRAILER_LEN : end])):
        raise RecordError(f"record CRC trailer damaged at {pos}")
    try:
        str(buf[t : t + tlen], "utf-8")
        str(buf[p:end], "utf-8")
    except UnicodeDecodeError as exc:
        raise RecordError(f"undecodable text in record at {pos}: {exc.reason}") from None
    return size


def _damaged_seal(tail: bytes) -> bool:
    """True when the last 20 bytes of an unsealed record are a trailer with some bytes changed: its name off by
    one to four bytes, or by more with the rest of its shape intact. (A record written by a version that did not seal — after a downgrade — ends with the
    producer's own properties and is accepted.)"""
    name = tail[: len(TRAILER_PREFIX)]
    changed = sum(a != b for a, b in zip(name, TRAILER_PREFIX, strict=True))
    if 0 < changed <= 4:
        return True
    # more of the name changed, but some of it and the trailer's whole shape are intact (the name's \x01, ten
    # digits, the final separator): a trailer whose name was hit, not a producer's own last property
    value = tail[len(TRAILER_PREFIX) :]
    intact = len(TRAILER_PREFIX) - changed
    return intact >= 2 and name[-1:] == b"\x01" and value[:DIGITS_LEN].isdigit() and value[-1:] == b"\x02"


def check_read(view: memoryview, queue_id: int, queue_offset: int, *, require_seal: int) -> str | None:
    """The read path's check of one record (``view`` is exactly the unit's bytes): None when it is valid and is
    the record of (``queue_id``, ``queue_offset``), else what is wrong. One fused pass for sealed records."""
    n = len(view)
    try:
        size, magic, bcrc, qid, _flag, qoff = HEAD_TO_QUEUEOFFSET.unpack_from(view, 0)
    except struct.error:
        return "record shorter than a header"
    if size != n:
        return f"record size {size} differs from the consume-queue unit's {n}"
    if qid != queue_id or qoff != queue_offset:
        return f"record is queue {qid} offset {qoff}"
    trailer = view[n - TRAILER_LEN : n - DIGITS_LEN - 1]
    if magic == MAGIC_V1 and n >= _MIN_SEALED and trailer == TRAILER_PREFIX:
        start, blen = body_bounds(view, 0)
        if blen >= 0 and start + blen <= n - TRAILER_LEN:
            c = _crc32(view[start : start + blen])
            if c & 0x7FFFFFFF == bcrc:
                c = _crc32(view[start + blen : n - DIGITS_LEN - 1], _crc32(view[:start], c))
                raw = bytes(view[n - DIGITS_LEN - 1 :])
                if raw[:DIGITS_LEN].isdigit() and raw[-1] == 2 and int(raw[:DIGITS_LEN]) == c:
                    return None
        return "record CRC mismatch"
    try:
        verify(view, 0, require_seal=require_seal)
    except RecordError as exc:
        return str(exc)
    return None
