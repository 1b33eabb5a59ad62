"""``encode_frame_parts``: a frame as the parts of one write — a body of ``SPLIT_BODY`` bytes or more is its own part,
the very ``bytes`` of the command (never copied into a frame), after the length words and header; a smaller frame is
one part. Either way the parts joined are ``encode_frame``'s bytes and decode back to the command."""

from __future__ import annotations

import pytest

from protocol.codes import SerializeType
from protocol.command import RemotingCommand
from protocol.errors import LocalProtocolError
from protocol.frame import SPLIT_BODY, FrameDecoder, encode_frame, encode_frame_parts


@pytest.mark.parametrize("stype", list(SerializeType))
@pytest.mark.parametrize("size", [0, 1, SPLIT_BODY - 1, SPLIT_BODY, 1 << 20])
def test_parts_join_to_the_frame_and_decode_back(size: int, stype: SerializeType) -> None:
    body = bytes(range(256)) * (size // 256) + b"t" * (size % 256)
    cmd = RemotingCommand.request(11, {"topic": "T", "queueId": "3"}, body, serialize_type=stype)
    out: list[bytes] = [b"earlier frame"]
    encode_frame_parts(cmd, out)
    parts = out[1:]
    if size >= SPLIT_BODY:
        assert len(parts) == 2 and parts[1] is cmd.body  # the body itself: no copy
    else:
        assert len(parts) == 1
    wire = b"".join(parts)
    assert wire == encode_frame(cmd)
    dec = FrameDecoder()
    dec.feed(wire)
    (got,) = dec.frames()
    assert (got.code, got.opaque, got.ext_fields, got.body) == (cmd.code, cmd.opaque, cmd.ext_fields, body)


def test_a_frame_that_does_not_encode_appends_nothing() -> None:
    out: list[bytes] = []
    with pytest.raises(LocalProtocolError):
        encode_frame_parts(RemotingCommand.request(11, {}, b"x" * (2 * SPLIT_BODY)), out, max_frame=SPLIT_BODY)
    assert out == []
