"""Consume-queue marks: how many units of each consume queue were durable at the last logics flush.

A consume queue's end is where its first zero unit is, so units zeroed at the very end of its last file (lost
writes, damage) look like a queue that simply ends early: nothing after them reveals the gap unless later records
of the queue are re-dispatched. Recovery compares each queue's recovered end with the mark and rebuilds a queue
that ends short of it from the commit log (``recovery.py``).

File ``cq_marks`` under the store root (big-endian; written as tmp + rename by the logics flush whenever a mark
changed, not fsynced: a mark that is old is only lower, so it can miss damage but never invent it)::

    | int32 magic 0x43514D31 ("CQM1") | int32 count |
    count x ( | int16 topicLen | topic (UTF-8) | int32 queueId | int64 unitsDurable | )
    | uint32 crc32 of everything before |

An unreadable or damaged file reads as no marks (start-up then repairs what later records reveal, as before).
"""

from __future__ import annotations

import os
import struct
from typing import Final

from protocol.crc import crc32

MAGIC: Final = 0x43514D31
_HEAD: Final = struct.Struct(">ii")
_LEN: Final = struct.Struct(">h")
_TAIL: Final = struct.Struct(">iq")
_CRC: Final = struct.Struct(">I")

Marks = dict[tuple[str, int], int]


def marks_path(root: str) -> str:
    return os.path.join(root, "cq_marks")


def encode_marks(marks: Marks) -> bytes:
    out = bytearray(_HEAD.pack(MAGIC, len(marks)))
    for (topic, qid), units in marks.items():
        t = topic.encode()
        out += _LEN.pack(len(t))
        out += t
        out += _TAIL.pack(qid, units)
    out += _CRC.pack(crc32(out))
    return bytes(out)


def decode_marks(data: bytes) -> Marks:
    """The marks in ``data``; empty when it is not a whole, undamaged marks file."""
    if len(data) < _HEAD.size + _CRC.size:
        return {}
    body, (crc,) = data[: -_CRC.size], _CRC.unpack_from(data, len(data) - _CRC.size)
    if crc32(body) != crc:
        return {}
    magic, count = _HEAD.unpack_from(body, 0)
    if magic != MAGIC:
        return {}
    marks: Marks = {}
    pos = _HEAD.size
    try:
        for _ in range(count):
            (n,) = _LEN.unpack_from(body, pos)
            topic = body[pos + 2 : pos + 2 + n].decode()
            qid, units = _TAIL.unpack_from(body, pos + 2 + n)
            marks[(topic, qid)] = units
            pos += 2 + n + _TAIL.size
    except (struct.error, UnicodeDecodeError):
        return {}
    return marks


def read_marks(root: str) -> Marks:
    try:
        with open(marks_path(root), "rb") as f:
            return decode_marks(f.read())
    except OSError:
        return {}


def write_marks(root: str, marks: Marks) -> None:
    path = marks_path(root)
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(encode_marks(marks))
    os.replace(tmp, path)
