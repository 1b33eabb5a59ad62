"""RemotingCommand round trips through ``encode_frame`` / ``FrameDecoder`` in all three header types, fed in any
chunking, and the error classes malformed input raises — only ``ProtocolError`` subclasses, never anything else."""

from __future__ import annotations

import json
import struct

import msgpack
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol.codes import LanguageCode, SerializeType
from protocol.command import RemotingCommand
from protocol.errors import FrameTooLargeError, LocalProtocolError, MalformedFrameError, ProtocolError
from protocol.frame import MAX_FRAME, FrameDecoder, encode_frame

# Text with everything the properties string and the clients use: unicode, \x01 / \x02 separators, empty strings.
text = st.text(
    alphabet=st.one_of(st.characters(blacklist_categories=("Cs",)), st.sampled_from('\x00\x01\x02\n"\\{}é中🚀')),
    max_size=40,
)
ext_fields = st.dictionaries(text.filter(bool), text, max_size=10)


def _command(
    code: int,
    language: LanguageCode,
    version: int,
    opaque: int,
    flag: int,
    remark: str | None,
    ext_fields: dict[str, str],
    body: bytes,
    serialize_type: SerializeType,
) -> RemotingCommand:
    """A command with every header field chosen (the constructor takes the six a request or reply sets)."""
    cmd = RemotingCommand(code, opaque, remark, ext_fields, body, serialize_type)
    cmd.language, cmd.version, cmd.flag = language, version, flag
    return cmd


commands = st.builds(
    _command,
    code=st.integers(0, 32767),  # int16 in the ROCKETMQ header
    language=st.sampled_from(list(LanguageCode)),
    version=st.integers(0, 32767),
    opaque=st.integers(-(2**31), 2**31 - 1),
    flag=st.integers(0, 3),
    remark=st.one_of(st.none(), text.filter(bool)),  # the binary header writes "" and None alike
    ext_fields=ext_fields,
    body=st.binary(max_size=4096),
    serialize_type=st.sampled_from(list(SerializeType)),
)


def decode_all(wire: bytes, cuts: list[int]) -> tuple[list[RemotingCommand], FrameDecoder]:
    dec = FrameDecoder()
    out: list[RemotingCommand] = []
    pos = 0
    for n in [*cuts, len(wire)]:
        dec.feed(wire[pos : pos + n])
        pos += n
        out.extend(dec.frames())
    return out, dec


@given(cmds=st.lists(commands, min_size=1, max_size=6), cuts=st.lists(st.integers(1, 97), max_size=30))
@settings(max_examples=300, deadline=None)
def test_commands_round_trip_in_any_chunking(cmds: list[RemotingCommand], cuts: list[int]) -> None:
    wire = b"".join(encode_frame(c) for c in cmds)
    out, dec = decode_all(wire, cuts)
    assert out == cmds
    assert dec.buffered == 0
    for c in out:
        assert all(isinstance(v, str) for v in c.ext_fields.values())


@given(cmd=commands)
@settings(max_examples=200, deadline=None)
def test_each_serialize_type_carries_the_same_command(cmd: RemotingCommand) -> None:
    for st_ in SerializeType:
        cmd.serialize_type = st_
        wire = encode_frame(cmd)
        length, word = struct.unpack_from(">iI", wire)
        assert length == len(wire) - 4 and word >> 24 == st_
        out, _ = decode_all(wire, [])
        assert out == [cmd]


@given(cmd=commands, n=st.integers(0, 200))
@settings(max_examples=100, deadline=None)
def test_a_partial_frame_waits_for_more(cmd: RemotingCommand, n: int) -> None:
    wire = encode_frame(cmd)
    n = min(n, len(wire) - 1)
    dec = FrameDecoder()
    dec.feed(wire[:n])
    assert dec.next_frame() is None and dec.buffered == n
    dec.feed(wire[n:])
    assert dec.next_frame() == cmd and dec.next_frame() is None


def test_json_numbers_booleans_and_nulls_in_ext_fields_become_text() -> None:
    header = b'{"code":10,"extFields":{"i":1,"b":true,"f":false,"x":1.5,"s":"s","n":null},"language":"CPP","opaque":3}'
    frame = struct.pack(">iI", 4 + len(header), len(header)) + header
    (cmd,), _ = decode_all(frame, [])
    assert cmd.ext_fields == {"i": "1", "b": "true", "f": "false", "x": "1.5", "s": "s"}
    assert cmd.language == LanguageCode.CPP and cmd.version == 0 and cmd.remark is None


# -- malformed input -------------------------------------------------------------------------------------------------


def _frame(stype: int, header: bytes, body: bytes = b"") -> bytes:
    return struct.pack(">iI", 4 + len(header) + len(body), (stype << 24) | len(header)) + header + body


def _truncated(stype: SerializeType) -> bytes:
    header = encode_frame(RemotingCommand(10, remark="remark", ext_fields={"a": "b"}, serialize_type=stype))[8:]
    return _frame(stype, header[: len(header) // 2])


BIN = struct.pack(">hbhii", 10, 1, 63, 1, 0)
MALFORMED = {
    "header length > frame": struct.pack(">iI", 10, 100) + b"x" * 6,
    "length below the header word": struct.pack(">iI", 2, 0),
    "negative length": struct.pack(">iI", -5, 0),
    "unknown serialize type 3": _frame(3, b"{}"),
    "unknown serialize type 255": _frame(255, b"{}"),
    "bad JSON": _frame(0, b"{bad}"),
    "JSON not an object": _frame(0, b"[]"),
    "JSON not UTF-8": _frame(0, b'{"code":\xff}'),
    "JSON code missing": _frame(0, b'{"opaque":1}'),
    "JSON code a string": _frame(0, b'{"code":"ten"}'),
    "JSON code a boolean": _frame(0, b'{"code":true}'),
    "JSON code a float": _frame(0, b'{"code":1.5}'),
    "JSON remark a number": _frame(0, b'{"code":1,"remark":5}'),
    "JSON extFields a list": _frame(0, b'{"code":1,"extFields":[1]}'),
    "JSON ext value an object": _frame(0, b'{"code":1,"extFields":{"a":{}}}'),
    "JSON truncated": _truncated(SerializeType.JSON),
    "empty JSON header": _frame(0, b""),
    "msgpack garbage": _frame(2, b"\xc1\xc1"),
    "msgpack truncated": _truncated(SerializeType.MSGPACK),
    "msgpack not a map": _frame(2, msgpack.packb([1, 2])),
    "msgpack int keys": _frame(2, msgpack.packb({1: 2})),
    "msgpack bytes ext value": _frame(2, msgpack.packb({"code": 1, "extFields": {"a": b"\x00"}}, use_bin_type=True)),
    "binary too short": _frame(1, BIN[:7]),
    "binary truncated": _truncated(SerializeType.ROCKETMQ),
    "binary remark length past the end": _frame(1, BIN + struct.pack(">i", 99) + b"ab"),
    "binary negative remark length": _frame(1, BIN + struct.pack(">i", -1) + struct.pack(">i", 0)),
    "binary ext length past the end": _frame(1, BIN + struct.pack(">ii", 0, 50)),
    "binary negative ext length": _frame(1, BIN + struct.pack(">ii", 0, -4)),
    "binary ext entry past the end": _frame(
        1, BIN + struct.pack(">ii", 0, 7) + struct.pack(">h", 1) + b"k" + b"\x00\x00\x00\x09"
    ),
    "binary key length negative": _frame(1, BIN + struct.pack(">ii", 0, 6) + struct.pack(">hi", -1, 0)),
    "binary remark not UTF-8": _frame(1, BIN + struct.pack(">i", 1) + b"\xff" + struct.pack(">i", 0)),
}


@pytest.mark.parametrize("frame", list(MALFORMED.values()), ids=list(MALFORMED))
def test_malformed_frames_raise_malformed_and_poison_the_decoder(frame: bytes) -> None:
    dec = FrameDecoder()
    dec.feed(frame)
    with pytest.raises(MalformedFrameError):
        dec.next_frame()
    with pytest.raises(MalformedFrameError):  # the connection must be closed; the decoder stays failed
        dec.next_frame()


@pytest.mark.parametrize("length", [MAX_FRAME + 1, 2**31 - 1])
def test_length_bomb_is_refused_before_buffering(length: int) -> None:
    dec = FrameDecoder()
    dec.feed(struct.pack(">i", length))  # the length word alone is enough to refuse
    with pytest.raises(FrameTooLargeError) as info:
        dec.next_frame()
    assert info.value.length == length and info.value.limit == MAX_FRAME
    assert dec.buffered == 4


def test_a_smaller_limit_applies() -> None:
    cmd = RemotingCommand(10, body=b"x" * 100)
    dec = FrameDecoder(max_frame=64)
    dec.feed(encode_frame(cmd))
    with pytest.raises(FrameTooLargeError):
        dec.next_frame()
    with pytest.raises(LocalProtocolError):
        encode_frame(cmd, max_frame=64)


@pytest.mark.parametrize(
    "cmd",
    [
        RemotingCommand(40000, serialize_type=SerializeType.ROCKETMQ),
        _command(10, LanguageCode.PYTHON, -40000, 0, 0, None, {}, b"", SerializeType.ROCKETMQ),
        RemotingCommand(10, opaque=2**31, serialize_type=SerializeType.ROCKETMQ),
        RemotingCommand(10, opaque=2**64, serialize_type=SerializeType.MSGPACK),
        RemotingCommand(10, body=b"x" * MAX_FRAME),
    ],
    ids=["code", "version", "opaque", "msgpack opaque", "too big"],
)
def test_unencodable_commands_raise_local_protocol_error(cmd: RemotingCommand) -> None:
    with pytest.raises(LocalProtocolError):
        encode_frame(cmd)


@given(data=st.binary(max_size=400))
@settings(max_examples=500, deadline=None)
def test_random_bytes_raise_only_protocol_errors(data: bytes) -> None:
    dec = FrameDecoder()
    dec.feed(data)
    try:
        dec.frames()
    except ProtocolError:
        pass


@given(cmd=commands, edits=st.lists(st.tuples(st.integers(0, 10_000), st.integers(0, 255)), min_size=1, max_size=8))
@settings(max_examples=500, deadline=None)
def test_corrupted_headers_raise_only_protocol_errors(cmd: RemotingCommand, edits: list[tuple[int, int]]) -> None:
    """Flip header bytes of a valid frame, keeping both lengths consistent, so the header decoders see the damage."""
    wire = bytearray(encode_frame(cmd))
    hlen = struct.unpack_from(">I", wire, 4)[0] & 0xFFFFFF
    if hlen == 0:
        return
    for pos, byte in edits:
        wire[8 + pos % hlen] = byte
    dec = FrameDecoder()
    dec.feed(bytes(wire))
    try:
        out = dec.frames()
    except ProtocolError:
        return
    assert len(out) == 1 and all(isinstance(v, str) for v in out[0].ext_fields.values())


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**64 - 1) | st.floats() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=10,
)
header_objects = st.fixed_dictionaries(
    {},
    optional={
        "code": json_values,
        "language": json_values,
        "version": json_values,
        "opaque": json_values,
        "flag": json_values,
        "remark": json_values,
        "extFields": json_values | st.dictionaries(st.text(max_size=5), json_values, max_size=4),
    },
)


@given(obj=header_objects, packer=st.sampled_from(["json", "msgpack"]))
@settings(max_examples=500, deadline=None)
def test_odd_header_objects_raise_only_malformed(obj: dict[str, object], packer: str) -> None:
    if packer == "json":
        frame = _frame(0, json.dumps(obj).encode())
    else:
        frame = _frame(2, msgpack.packb(obj, use_bin_type=True))
    dec = FrameDecoder()
    dec.feed(frame)
    try:
        cmd = dec.next_frame()
    except MalformedFrameError:
        return
    assert cmd is not None and all(isinstance(v, str) for v in cmd.ext_fields.values())
    assert isinstance(cmd.code, int) and isinstance(cmd.language, LanguageCode)
