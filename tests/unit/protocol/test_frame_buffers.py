"""``FrameDecoder`` received through its own buffer (``get_buffer`` / ``buffer_updated``, what a socket's
``recv_into`` and an ``asyncio.BufferedProtocol`` transport do): frames split at every boundary, a frame larger
than the standard buffer received straight into a buffer sized for it, bodies that stay intact when the buffer is
reused, the length limit refused before any allocation, and the held memory the server's budget is charged."""

from __future__ import annotations

import random
import struct

import pytest

from protocol.codes import SerializeType
from protocol.command import RemotingCommand
from protocol.errors import FrameTooLargeError, MalformedFrameError
from protocol.frame import MAX_FRAME, STANDARD_BUFFER, FrameDecoder, encode_frame


def cmd(opaque: int, body: bytes, st: SerializeType = SerializeType.JSON) -> RemotingCommand:
    return RemotingCommand(code=11, opaque=opaque, ext_fields={"k": str(opaque)}, body=body, serialize_type=st)


def receive(dec: FrameDecoder, data: bytes | memoryview, most: int = 1 << 30) -> None:
    """Write ``data`` into the decoder's buffer as a transport would: at most what ``get_buffer`` offers each time."""
    off = 0
    while off < len(data):
        dst = dec.get_buffer()
        assert len(dst) > 0
        n = min(len(dst), len(data) - off, most)
        dst[:n] = data[off : off + n]
        dec.buffer_updated(n)
        off += n


def drain(dec: FrameDecoder) -> list[RemotingCommand]:
    return dec.frames()


def same(a: RemotingCommand, b: RemotingCommand) -> bool:
    return (a.opaque, a.ext_fields, a.body) == (b.opaque, b.ext_fields, b.body)


def test_small_frames_split_at_every_boundary() -> None:
    sent = [cmd(1, b""), cmd(2, b"x" * 37, SerializeType.ROCKETMQ), cmd(3, b"y" * 300, SerializeType.MSGPACK)]
    wire = b"".join(encode_frame(c) for c in sent)
    for cut in range(len(wire) + 1):
        dec = FrameDecoder()
        receive(dec, wire[:cut])
        got = drain(dec)
        receive(dec, wire[cut:])
        got += drain(dec)
        assert len(got) == 3 and all(same(a, b) for a, b in zip(got, sent, strict=True)), cut
        assert dec.buffered == 0 and dec.reserved == 0


def test_every_byte_alone() -> None:
    sent = [cmd(i, bytes([i]) * i) for i in range(1, 20)]
    dec = FrameDecoder()
    got: list[RemotingCommand] = []
    for c in sent:
        receive(dec, encode_frame(c), most=1)
        got += drain(dec)
    assert all(same(a, b) for a, b in zip(got, sent, strict=True)) and len(got) == len(sent)


@pytest.mark.parametrize("size", [STANDARD_BUFFER - 200, STANDARD_BUFFER, 1 << 20, 5 << 20])
def test_a_large_frame_split_around_its_parts(size: int) -> None:
    body = random.Random(size).randbytes(size)
    sent = [cmd(1, b"head"), cmd(2, body), cmd(3, b"tail")]
    frames = [encode_frame(c) for c in sent]
    wire = b"".join(frames)
    start = len(frames[0])
    hlen = struct.unpack_from(">I", frames[1], 4)[0] & 0xFFFFFF
    marks = [0, 4, 8, 8 + hlen, len(frames[1]) - 1, len(frames[1])]
    cuts = sorted({start + m + d for m in marks for d in (-1, 0, 1)} | {1, len(wire) - 1})
    for cut in cuts:
        dec = FrameDecoder()
        receive(dec, wire[:cut])
        got = drain(dec)
        receive(dec, wire[cut:])
        got += drain(dec)
        assert [c.opaque for c in got] == [1, 2, 3], cut
        assert got[1].body == body and type(got[1].body) is bytes
        assert same(got[0], sent[0]) and same(got[2], sent[2])


def test_a_huge_body_in_many_chunks_lands_in_a_buffer_sized_for_the_frame() -> None:
    body = random.Random(7).randbytes(8 << 20)
    wire = encode_frame(cmd(9, body))
    dec = FrameDecoder()
    receive(dec, wire[:100])  # the length word and some header
    assert dec.next_frame() is None
    # from now on the rest of the frame is received straight into one buffer: it offers exactly what is missing
    assert len(dec.get_buffer()) == len(wire) - 100
    assert dec.reserved == len(wire) and dec.buffered == 100
    rng = random.Random(8)
    off = 100
    while off < len(wire):
        n = rng.randint(1, 300_000)
        receive(dec, wire[off : off + n])
        off += n
        got = dec.next_frame()
        assert (got is None) == (off < len(wire))
    assert got is not None and got.body == body and got.opaque == 9
    assert dec.buffered == 0 and dec.reserved == 0


def test_bodies_stay_intact_when_the_buffer_is_reused() -> None:
    dec = FrameDecoder()
    bodies = [bytes([i]) * (1 << 20) for i in range(1, 4)]
    got = []
    for i, body in enumerate(bodies):
        receive(dec, encode_frame(cmd(i, body)), most=100_000)
        got += drain(dec)
    small = cmd(9, b"s")
    receive(dec, encode_frame(small))  # a small frame after the large ones: back to the standard buffer
    got += drain(dec)
    assert [c.body for c in got[:3]] == bodies and same(got[3], small)
    assert len(dec.get_buffer()) == STANDARD_BUFFER


def test_feed_and_receive_are_one_algorithm() -> None:
    sent = [cmd(i, random.Random(i).randbytes(i * 50_000)) for i in range(6)]
    wire = b"".join(encode_frame(c) for c in sent)
    dec = FrameDecoder()
    dec.feed(wire)  # every frame at once, none returned in between: the buffer grows to hold them
    got = drain(dec)
    assert len(got) == 6 and all(same(a, b) for a, b in zip(got, sent, strict=True))


def test_oversized_declared_length_is_refused_before_allocation() -> None:
    dec = FrameDecoder(max_frame=1 << 20)
    receive(dec, struct.pack(">i", (1 << 20) + 1))
    with pytest.raises(FrameTooLargeError):
        dec.next_frame()
    assert len(dec.get_buffer()) < STANDARD_BUFFER  # still the standard buffer: nothing was allocated for it
    assert dec.reserved == 4
    with pytest.raises(FrameTooLargeError):  # poisoned
        dec.next_frame()


def test_the_limit_itself_is_accepted() -> None:
    body = b"z" * (MAX_FRAME - 4 - 200)
    wire = encode_frame(cmd(1, body))
    dec = FrameDecoder()
    receive(dec, wire, most=1 << 20)
    got = drain(dec)
    assert len(got) == 1 and got[0].body == body


def test_a_malformed_header_in_a_large_frame_poisons_the_decoder() -> None:
    header = b"{not json"
    body = b"b" * (STANDARD_BUFFER * 2)
    wire = struct.pack(">iI", 4 + len(header) + len(body), len(header)) + header + body
    dec = FrameDecoder()
    receive(dec, wire[:50])
    assert dec.next_frame() is None
    receive(dec, wire[50:])
    with pytest.raises(MalformedFrameError):
        dec.next_frame()
    with pytest.raises(MalformedFrameError):
        dec.next_frame()


def test_discard_releases_a_large_buffer() -> None:
    dec = FrameDecoder()
    receive(dec, encode_frame(cmd(1, b"q" * (2 << 20)))[:1000])
    assert dec.next_frame() is None and dec.reserved > 2 << 20
    dec.discard()
    assert dec.buffered == 0 and dec.reserved == 0 and len(dec.get_buffer()) == STANDARD_BUFFER


def test_a_stream_of_mixed_sizes_in_random_reads() -> None:
    rng = random.Random(11)
    sizes = [1 << 20, 1 << 20, 300, 2 << 20, 70_000, 0, 700, 1 << 20, 5, 900_000, 64 * 1024]
    sent = [cmd(i, rng.randbytes(n)) for i, n in enumerate(sizes)]
    wire = b"".join(encode_frame(c) for c in sent)
    dec = FrameDecoder()
    got: list[RemotingCommand] = []
    off = 0
    while off < len(wire):  # reads that end anywhere: a frame's head often arrives with the previous frame's tail
        n = rng.randint(1, 400_000)
        receive(dec, wire[off : off + n])
        off += n
        got += drain(dec)
    assert len(got) == len(sent) and all(same(a, b) for a, b in zip(got, sent, strict=True))


def test_small_frames_across_the_end_of_the_standard_buffer() -> None:
    sent = [cmd(i, bytes([i % 256]) * 700) for i in range(1000)]
    wire = b"".join(encode_frame(c) for c in sent)
    dec = FrameDecoder()
    got: list[RemotingCommand] = []
    for off in range(0, len(wire), 10_000):
        receive(dec, wire[off : off + 10_000])
        got += drain(dec)
        assert dec.reserved < 1000  # at most one partial frame
    assert len(got) == 1000 and all(same(a, b) for a, b in zip(got, sent, strict=True))
    assert len(dec.get_buffer()) == STANDARD_BUFFER


@pytest.mark.parametrize("length", [-1, -(1 << 31), 0, 3])
def test_a_negative_or_short_length_word_is_malformed(length: int) -> None:
    dec = FrameDecoder()
    receive(dec, struct.pack(">i", length) + b"\x00" * 12)
    with pytest.raises(MalformedFrameError, match=f"frame length {length} is smaller"):
        dec.next_frame()


def test_header_type_and_length_are_read_from_the_second_word() -> None:
    header = b'{"code":7,"flag":0,"language":"JAVA","opaque":9,"version":1}'
    wire = struct.pack(">iI", 4 + len(header) + 3, len(header)) + header + b"abc"
    dec = FrameDecoder()
    receive(dec, wire + struct.pack(">iI", 4 + 2, (3 << 24) | 2) + b"{}")
    got = dec.next_frame()
    assert got is not None and (got.code, got.opaque, got.body) == (7, 9, b"abc")
    with pytest.raises(MalformedFrameError, match="unknown serialize type 3"):
        dec.next_frame()
