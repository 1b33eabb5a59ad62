"""Sans-IO length-prefixed framing of RemotingCommands (no asyncio here).

Frame layout, big-endian::

    +--------------+-------------------------------------+--------------+-----------+
    | int32 length | int32 (serializeType << 24 | hdrLen)| header bytes | body      |
    +--------------+-------------------------------------+--------------+-----------+
    length = 4 + hdrLen + len(body)   (the length field does not count itself)

``FrameDecoder`` receives bytes into its own buffer: ``get_buffer()`` is where the next bytes go (a socket's
``recv_into`` or an ``asyncio.BufferedProtocol`` transport writes there), ``buffer_updated(n)`` says how many came;
``feed(data)`` copies bytes in for a caller that holds them already. ``next_frame()`` returns the next decoded
``RemotingCommand`` or ``None`` when more bytes are needed.

``encode_frame_parts`` appends a frame to a connection's list of outgoing parts (one ``transport.writelines``): a
body of ``SPLIT_BODY`` bytes or more is a part of its own, after the length words and header, so a 1 MiB pull reply
or a batch send leaves without being copied into a frame; a smaller frame is one joined ``bytes``.
``encode_frame`` is the same frame as one ``bytes``.

* Small frames (requests, most replies) arrive in a standard 64 KiB buffer, several per read; their body is copied
  out of it. A frame that does not fit what is left of the buffer moves, as soon as its length word is read, to the
  buffer's front, or, larger than the buffer, to a new one sized for it, and the rest of it is received straight
  there: a 1 MiB pull reply or a batch send is copied once, when its body is cut out as ``bytes`` (a
  ``RemotingCommand``'s body is immutable ``bytes``, which no receive can write into). Every body and header is a
  copy, so nothing handed out shares memory with a buffer that is written again.
* A buffer sized for a large frame is kept while large frames follow each other (the next 1 MiB reply lands in it,
  no allocation) and dropped for a standard one after a small frame.
* A declared length above ``max_frame`` raises ``FrameTooLargeError`` before any allocation for it; a header length
  larger than the frame, an unknown serialize type or an undecodable header raises ``MalformedFrameError``. After an
  error the decoder is poisoned: the caller must close the connection.
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
STANDARD_BUFFER: Final = 64 * 1024  # the receive buffer of small frames; larger frames get one sized for them
# a body at least this large leaves as its own part of the write, after the length words and header, instead of being
# copied into one frame ``bytes``; a smaller one is cheaper to copy than to pass as a part (bench/frame_write_bench.py)
SPLIT_BODY: Final = 16 * 1024


def encode_frame_parts(cmd: RemotingCommand, out: list[bytes], max_frame: int = MAX_FRAME) -> None:
    """Append the frame of ``cmd`` to ``out`` as the parts of one write (``transport.writelines``): the whole frame
    as one ``bytes`` when its body is smaller than ``SPLIT_BODY``, else the length words and header, then the body
    itself, never copied into a frame. Appends nothing when the frame does not encode (``LocalProtocolError``)."""
    header = encode_header(cmd)
    hlen = len(header)
    if hlen > 0xFFFFFF:
        raise LocalProtocolError(f"header of {hlen} bytes does not fit the 24-bit header length")
    body = cmd.body
    length = 4 + hlen + len(body)
    if length > max_frame:
        raise LocalProtocolError(f"frame of {length} bytes exceeds the limit of {max_frame}")
    prefix = PREFIX.pack(length, (int(cmd.serialize_type) << 24) | hlen)
    if len(body) >= SPLIT_BODY:
        out.append(prefix + header)
        out.append(body)
    else:
        out.append(b"".join((prefix, header, body)))


def encode_frame(cmd: RemotingCommand, max_frame: int = MAX_FRAME) -> bytes:
    """The frame of ``cmd`` as one ``bytes`` (a blocking socket's ``sendall``, tests): ``encode_frame_parts`` joined."""
    out: list[bytes] = []
    encode_frame_parts(cmd, out, max_frame)
    return out[0] if len(out) == 1 else b"".join(out)


class FrameDecoder:
    """Incremental decoder: receive bytes in any chunking into its buffer, pull whole commands out."""

    __slots__ = ("_buf", "_view", "_pos", "_end", "_max_frame", "_error")

    def __init__(self, max_frame: int = MAX_FRAME) -> None:
        self._buf = bytearray(STANDARD_BUFFER)
        self._view = memoryview(self._buf)
        self._pos = 0  # start of the first frame not yet returned
        self._end = 0  # end of the bytes received
        self._max_frame = max_frame
        self._error: Exception | None = None

    @property
    def buffered(self) -> int:
        """Bytes received but not yet returned as frames (a partial frame in progress)."""
        return self._end - self._pos

    @property
    def reserved(self) -> int:
        """Memory held for the frames not yet returned: the bytes received, or, while a frame larger than the
        standard buffer is incomplete, the whole buffer allocated for it when its length arrived."""
        if self._end == self._pos:
            return 0
        size = len(self._buf)
        return size - self._pos if size > STANDARD_BUFFER else self._end - self._pos

    def discard(self) -> None:
        """Drop every buffered byte and release a large buffer (the connection is being closed)."""
        self._pos = self._end = 0
        if len(self._buf) > STANDARD_BUFFER:
            self._replace(STANDARD_BUFFER)

    def get_buffer(self) -> memoryview:
        """Where the next bytes go (never empty); ``buffer_updated(n)`` after writing ``n`` bytes at its start."""
        end = self._end
        if end == 0:
            return self._view
        if end == len(self._buf):  # full: make room for as much again as is not yet returned
            self._make_room(max(STANDARD_BUFFER, 2 * (end - self._pos)))
            end = self._end
        return self._view[end:]

    def buffer_updated(self, nbytes: int) -> None:
        self._end += nbytes

    def feed(self, data: bytes | bytearray | memoryview) -> None:
        """Copy ``data`` in (for a caller that received it elsewhere)."""
        with memoryview(data) as src:
            size = src.nbytes
            off = 0
            while off < size:
                dst = self.get_buffer()
                n = min(len(dst), size - off)
                dst[:n] = src[off : off + n]
                self._end += n
                off += n

    def _make_room(self, size: int) -> None:
        """Leave room for ``size`` bytes from the start of the first frame not yet returned: its bytes move to the
        front of this buffer when it is large enough (nothing handed out shares it: every body is a copy), else to a
        new one of ``size`` bytes (at least the standard size)."""
        pos, end = self._pos, self._end
        if size <= len(self._buf):
            if pos:
                self._buf[: end - pos] = self._buf[pos:end]  # through a copy of the slice: the two may overlap
                self._pos = 0
                self._end = end - pos
        else:
            self._replace(max(STANDARD_BUFFER, size))

    def _replace(self, size: int) -> None:
        """Move the bytes not yet returned to the start of a new buffer of ``size`` bytes."""
        pos, end = self._pos, self._end
        buf = bytearray(size)
        if end > pos:
            buf[: end - pos] = self._view[pos:end]
        self._buf = buf
        self._view = memoryview(buf)
        self._pos = 0
        self._end = end - pos

    def _fail(self, exc: Exception) -> Exception:
        self._error = exc
        return exc

    def next_frame(self) -> RemotingCommand | None:
        if self._error is not None:
            raise self._error
        buf = self._buf
        pos = self._pos
        avail = self._end - pos
        if avail < 4:
            return None
        # the big-endian words read byte by byte: compiled, a byte index is a C array read, where unpack_from
        # made a tuple and two int objects per frame
        length = (buf[pos] << 24) | (buf[pos + 1] << 16) | (buf[pos + 2] << 8) | buf[pos + 3]
        if length >= 0x80000000:  # int32: a negative length
            length -= 0x100000000
        if length > self._max_frame:
            raise self._fail(FrameTooLargeError(length, self._max_frame))
        if length < 4:
            raise self._fail(MalformedFrameError(f"frame length {length} is smaller than the header-length word"))
        end = pos + 4 + length
        if avail < 4 + length:
            if end > len(buf):  # the rest of it is received straight into place, in a buffer sized for it if larger
                self._make_room(4 + length)
            return None
        stype = buf[pos + 4]  # length >= 4: the serializeType << 24 | headerLength word is here
        hlen = (buf[pos + 5] << 16) | (buf[pos + 6] << 8) | buf[pos + 7]
        if hlen > length - 4:
            raise self._fail(MalformedFrameError(f"header length {hlen} exceeds frame length {length}"))
        hstart = pos + 8
        bstart = hstart + hlen
        body = bytes(self._view[bstart:end]) if end > bstart else b""
        try:
            cmd = decode_header(stype, self._view[hstart:bstart], body)  # a view: the decoders copy what they keep
        except MalformedFrameError as exc:
            self._error = exc
            raise
        if end == self._end:  # all returned: the next bytes start over at the front
            self._pos = self._end = 0
            if length < STANDARD_BUFFER and len(buf) > STANDARD_BUFFER:
                self._replace(STANDARD_BUFFER)  # a small frame after large ones: release the large buffer
        else:
            self._pos = end
        return cmd

    def frames(self) -> list[RemotingCommand]:
        """Every complete frame currently buffered."""
        out = []
        while (cmd := self.next_frame()) is not None:
            out.append(cmd)
        return out
