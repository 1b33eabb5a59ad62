"""Sans-IO length-prefixed framing of RemotingCommands (no asyncio here).

Frame layout, big-endian::

    +--------------+-------------------------------------+--------------+-----------+
    | int32 length | int32 (serializeType << 24 | hdrLen)| header bytes | body      |
    +--------------+-------------------------------------+--------------+-----------+
    length = 4 + hdrLen + len(body)   (the length field does not count itself)

``FrameDecoder.feed(data)`` buffers bytes; ``next_frame()`` returns the next decoded ``RemotingCommand`` or
``None`` when more bytes are needed. A declared length above ``max_frame`` raises ``FrameTooLargeError`` before any
allocation for it; a header length larger than the frame, an unknown serialize type or an undecodable header raises
``MalformedFrameError``. After an error the decoder is poisoned: the caller must close the connection.
"""

from __future__ import annotations

import struct
from typing import Final

from protocol.command import RemotingCommand
from protocol.errors import FrameTooLargeError, LocalProtocolError, MalformedFrameError
from protocol.header_codec import decode_header, encode_header

MAX_FRAME: Final = 16 * 1024 * 1024
PREFIX: Final = struct.Struct(">iI")  # length, serializeType<<24 | headerLength
assert PREFIX.size == 8
_COMPACT_AT: Final = 256 * 1024


def encode_frame(cmd: RemotingCommand, max_frame: int = MAX_FRAME) -> bytes:
    header = encode_header(cmd)
    hlen = len(header)
    if hlen > 0xFFFFFF:
        raise LocalProtocolError(f"header of {hlen} bytes does not fit the 24-bit header length")
    length = 4 + hlen + len(cmd.body)
    if length > max_frame:
        raise LocalProtocolError(f"frame of {length} bytes exceeds the limit of {max_frame}")
    return b"".join((PREFIX.pack(length, (int(cmd.serialize_type) << 24) | hlen), header, cmd.body))


class FrameDecoder:
    """Incremental decoder: feed bytes in any chunking, pull whole commands out."""

    __slots__ = ("_buf", "_pos", "_max_frame", "_error")

    def __init__(self, max_frame: int = MAX_FRAME) -> None:
        self._buf = bytearray()
        self._pos = 0
        self._max_frame = max_frame
        self._error: Exception | None = None

    @property
    def buffered(self) -> int:
        """Bytes received but not yet returned as frames (a partial frame in progress)."""
        return len(self._buf) - self._pos

    def discard(self) -> None:
        """Drop every buffered byte and release the buffer (the connection is being closed)."""
        self._buf = bytearray()
        self._pos = 0

    def feed(self, data: bytes | bytearray | memoryview) -> None:
        if self._pos and self._pos >= _COMPACT_AT:
            del self._buf[: self._pos]
            self._pos = 0
        self._buf += data

    def next_frame(self) -> RemotingCommand | None:
        if self._error is not None:
            raise self._error
        buf = self._buf
        pos = self._pos
        avail = len(buf) - pos
        if avail < 4:
            return None
        length, word = PREFIX.unpack_from(buf, pos) if avail >= 8 else (struct.unpack_from(">i", buf, pos)[0], 0)
        if length > self._max_frame:
            self._error = FrameTooLargeError(length, self._max_frame)
            raise self._error
        if length < 4:
            self._error = MalformedFrameError(f"frame length {length} is smaller than the header-length word")
            raise self._error
        if avail < 4 + length:
            return None
        stype = word >> 24
        hlen = word & 0xFFFFFF
        if hlen > length - 4:
            self._error = MalformedFrameError(f"header length {hlen} exceeds frame length {length}")
            raise self._error
        hstart = pos + 8
        bstart = hstart + hlen
        end = pos + 4 + length
        if end > bstart:
            with memoryview(buf) as view:  # one copy of the body (slicing the bytearray first would make two)
                body = bytes(view[bstart:end])
        else:
            body = b""
        try:
            cmd = decode_header(stype, buf[hstart:bstart], body)
        except MalformedFrameError as exc:
            self._error = exc
            raise
        if end == len(buf):
            buf.clear()
            self._pos = 0
        else:
            self._pos = end
        return cmd

    def frames(self) -> list[RemotingCommand]:
        """Every complete frame currently buffered."""
        out = []
        while (cmd := self.next_frame()) is not None:
            out.append(cmd)
        return out
