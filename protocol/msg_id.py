"""Message ids as text, pure (the process-wide generator of unique ids, which reads the host's address, the pid and
the clock, is ``runtime.msg_id``):

| id            | bytes, as uppercase hex                                                               | length   |
|---------------|---------------------------------------------------------------------------------------|----------|
| offset msgId  | store host ip (4 or 16) + port int32 + commit-log offset int64                        | 32 / 56  |
| unique id     | ip (4) + pid int16 + hash int32 + ms since the start of the month int32 + counter int16 | 32       |

The unique id is J's ``MessageClientIDSetter`` (the ``UNIQ_KEY`` property the client sets); the offset msgId is
J's ``MessageDecoder.createMessageId``.
"""

from __future__ import annotations

import struct
import time
from typing import Final

from protocol.record import I32, I64, host_bytes, host_str

_UNIQ_HEAD: Final = struct.Struct(">hi")  # pid, hash
_UNIQ_TAIL: Final = struct.Struct(">iH")  # ms since the start of the month, counter


def create_offset_msg_id(ip: str, port: int, commit_log_offset: int) -> str:
    """Uppercase hex of ``ip bytes + int32 port + int64 offset`` (32 chars for IPv4, 56 for IPv6)."""
    raw, _v6 = host_bytes(ip)
    return (raw + I32.pack(port) + I64.pack(commit_log_offset)).hex().upper()


def offset_msg_id_prefix(ip: str, port: int) -> str:
    """The host part of every offset msgId of a store: ``prefix + f"{offset:016X}"`` is the full id."""
    raw, _v6 = host_bytes(ip)
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
    return host_str(ip_raw), port, offset


def uniq_id_prefix(ip: bytes, pid: int, salt: int) -> bytes:
    """The first 10 bytes of every unique id of a process: ip (4), pid (int16), a per-process salt (int32)."""
    return ip + _UNIQ_HEAD.pack(pid & 0x7FFF, salt & 0x7FFFFFFF)


def month_bounds(now_ms: int) -> tuple[int, int]:
    """(start of the local month holding ``now_ms``, start of the next one), in ms since the epoch."""
    t = time.localtime(now_ms / 1000)
    start = int(time.mktime((t.tm_year, t.tm_mon, 1, 0, 0, 0, 0, 0, -1)) * 1000)
    nxt_year, nxt_mon = (t.tm_year + 1, 1) if t.tm_mon == 12 else (t.tm_year, t.tm_mon + 1)
    return start, int(time.mktime((nxt_year, nxt_mon, 1, 0, 0, 0, 0, 0, -1)) * 1000)


def format_uniq_id(prefix: bytes, ms_in_month: int, counter: int) -> str:
    """A unique id: ``prefix`` (``uniq_id_prefix``), ms since the start of the month, a 16-bit counter."""
    return (prefix + _UNIQ_TAIL.pack(ms_in_month & 0x7FFFFFFF, counter & 0xFFFF)).hex().upper()
