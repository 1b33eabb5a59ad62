"""Round trips of RemotingCommands through the frame codec in all three header types, fed in arbitrary chunks, and
the errors malformed input must raise (and only those)."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol.codes import LanguageCode, SerializeType
from protocol.command import RemotingCommand
from protocol.errors import FrameTooLargeError, MalformedFrameError, ProtocolError
from protocol.frame import MAX_FRAME, FrameDecoder, encode_frame
from protocol.headers import MissingHeaderFieldError, PullMessageRequestHeader, SendMessageRequestHeader

text = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=40)
commands = st.builds(
    RemotingCommand,
    code=st.integers(0, 32767),
    language=st.sampled_from(list(LanguageCode)),
    version=st.integers(0, 32767),
    opaque=st.integers(0, 2**31 - 1),
    flag=st.integers(0, 3),
    remark=st.one_of(st.none(), text.filter(bool)),
    ext_fields=st.dictionaries(text.filter(bool), text, max_size=8),
    body=st.binary(max_size=2048),
    serialize_type=st.sampled_from(list(SerializeType)),
)


@given(cmds=st.lists(commands, min_size=1, max_size=5), cuts=st.lists(st.integers(1, 64), max_size=20))
@settings(max_examples=200, deadline=None)
def test_commands_round_trip_in_any_chunking(cmds: list[RemotingCommand], cuts: list[int]) -> None:
    wire = b"".join(encode_frame(c) for c in cmds)
    dec = FrameDecoder()
    out: list[RemotingCommand] = []
    pos = 0
    for n in [*cuts, len(wire)]:
        dec.feed(wire[pos : pos + n])
        pos += n
        out.extend(dec.frames())
    assert out == cmds
    assert dec.buffered == 0


@given(data=st.binary(max_size=300))
@settings(max_examples=300, deadline=None)
def test_random_bytes_raise_only_protocol_errors(data: bytes) -> None:
    dec = FrameDecoder()
    dec.feed(data)
    try:
        dec.frames()
    except ProtocolError:
        pass


def test_length_bomb_is_refused_before_buffering() -> None:
    dec = FrameDecoder()
    dec.feed(struct.pack(">iI", MAX_FRAME + 1, 10))
    with pytest.raises(FrameTooLargeError):
        dec.next_frame()


@pytest.mark.parametrize(
    "frame",
    [
        struct.pack(">iI", 10, 100) + b"x" * 6,  # header length > frame
        struct.pack(">iI", 6, (7 << 24) | 2) + b"{}",  # unknown serialize type
        struct.pack(">iI", 9, 5) + b"{bad}",  # bad JSON
        struct.pack(">iI", 6, 2) + b"[]",  # JSON that is not an object
        struct.pack(">iI", 2, 0),  # length smaller than the header word
    ],
)
def test_malformed_frames_raise_malformed(frame: bytes) -> None:
    dec = FrameDecoder()
    dec.feed(frame)
    with pytest.raises(MalformedFrameError):
        dec.next_frame()
    with pytest.raises(MalformedFrameError):  # poisoned: the connection must be closed
        dec.next_frame()


def test_missing_required_header_field_has_js_text() -> None:
    with pytest.raises(MissingHeaderFieldError, match=r"the custom field <topic> is null"):
        PullMessageRequestHeader.from_ext_fields({"consumerGroup": "g"})


def test_send_header_v1_v2_round_trip() -> None:
    h = SendMessageRequestHeader("pg", "T", "TBW102", 4, 1, 0, 123, 0, "TAGS\x01A\x02", 0, False, True, 16, "b")
    assert h.to_v2().to_v1() == h
    assert SendMessageRequestHeader.from_ext_fields(h.to_ext_fields()) == h
