"""Frame fuzzing over real sockets (docs/reference/reliability.md §5 item 14, at CI scale): Hypothesis builds valid frames in all
three header types and damages them — the length word, the serialize type, the header length, bytes of the JSON,
ROCKETMQ and msgpack headers, the ROCKETMQ length fields, odd JSON/msgpack header objects, truncation — or sends
plain random bytes, each on its own connection. After every example a well-formed client on a long-lived connection
still gets its answer; every reply the server wrote is a valid frame; the loop reports no error.

Bounded: a fixed number of examples, each ending with a half-close, so the test takes a few seconds.
"""

from __future__ import annotations

import asyncio
import json
import random
import struct
from collections.abc import AsyncIterator
from typing import Any

import msgpack
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from protocol.codes import LanguageCode, SerializeType
from protocol.command import RemotingCommand
from protocol.frame import FrameDecoder, encode_frame
from protocol.header_codec import BIN_FIXED
from protocol.remoting import RemotingClient, RemotingConnection
from tests.integration.remoting_support import (
    BOOM,
    FAST,
    MISSING,
    REFUSE,
    UNKNOWN,
    RawPeer,
    Served,
    loop_errors,
    server,
)

__all__ = ["loop_errors", "server"]  # fixtures

text = st.text(alphabet=st.sampled_from('ab\x00\x01\x02"\\{}é中🚀\ud800'), max_size=12)


def _command(language: LanguageCode, flag: int, **fields: Any) -> RemotingCommand:
    """A command from any client: its language and flag set after the constructor (which takes a request's own)."""
    cmd = RemotingCommand(**fields)
    cmd.language, cmd.flag = language, flag
    return cmd


commands = st.builds(
    _command,
    code=st.sampled_from([FAST, BOOM, REFUSE, MISSING, UNKNOWN]),  # never the held or call-back codes
    language=st.sampled_from(list(LanguageCode)),
    opaque=st.integers(-(2**31), 2**31 - 1),
    flag=st.sampled_from([0, 2]),
    remark=st.none() | text,
    ext_fields=st.dictionaries(text, text, max_size=4),
    body=st.binary(max_size=64),
    serialize_type=st.sampled_from(list(SerializeType)),
)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats() | text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(text, inner, max_size=3),
    max_leaves=8,
)
odd_objects = st.fixed_dictionaries(
    {"code": st.sampled_from([FAST, UNKNOWN]) | json_values},
    optional={k: json_values for k in ("language", "version", "opaque", "flag", "remark", "serializeTypeCurrentRPC")}
    | {"extFields": json_values | st.dictionaries(text, json_values, max_size=4)},
)


def _encodable(cmd: RemotingCommand) -> bytes:
    try:
        return encode_frame(cmd)
    except Exception:  # a lone surrogate or a range the binary header cannot carry: send it as text anyway
        header = json.dumps({"code": cmd.code, "opaque": cmd.opaque}).encode()
        return _with_header(0, header, cmd.body)


def _with_header(stype: int, header: bytes, body: bytes = b"") -> bytes:
    return struct.pack(">iI", 4 + len(header) + len(body), (stype << 24) | len(header)) + header + body


def _patch(wire: bytes, pos: int, data: bytes) -> bytes:
    return wire[:pos] + data + wire[pos + len(data) :]


@st.composite
def payloads(draw: st.DrawFn) -> bytes:
    wire = _encodable(draw(commands))
    hlen = struct.unpack_from(">I", wire, 4)[0] & 0xFFFFFF
    kind = draw(
        st.sampled_from(
            ["length", "stype", "hlen", "header_bytes", "rocketmq_lengths", "odd_json", "odd_msgpack", "cut", "random"]
        )
    )
    if kind == "length":
        n = draw(st.integers(-(2**31), 2**31 - 1) | st.integers(-2, len(wire) + 8))
        out = _patch(wire, 0, struct.pack(">i", n))
    elif kind == "stype":
        out = _patch(wire, 4, bytes([draw(st.integers(0, 255))]))
    elif kind == "hlen":
        out = _patch(wire, 5, draw(st.integers(0, 0xFFFFFF)).to_bytes(3, "big"))
    elif kind == "header_bytes" and hlen:
        edits = draw(st.lists(st.tuples(st.integers(0, hlen - 1), st.integers(0, 255)), min_size=1, max_size=6))
        out = wire
        for pos, byte in edits:
            out = _patch(out, 8 + pos, bytes([byte]))
    elif kind == "rocketmq_lengths":
        # a binary header whose remark, ext, key or value length lies
        remark, key, value = draw(text).encode(errors="replace"), b"k", b"v"
        fields = [len(remark), len(key) + len(value) + 6, len(key), len(value)]
        which = draw(st.integers(0, 3))
        fields[which] = draw(st.integers(-(2**31), 2**31 - 1) | st.integers(-2, 64))
        rl, el, kl, vl = fields
        header = BIN_FIXED.pack(FAST, 1, 63, 1, 0) + struct.pack(">i", rl) + remark + struct.pack(">i", el)
        header += struct.pack(">h", max(min(kl, 32767), -32768)) + key + struct.pack(">i", vl) + value
        out = _with_header(1, header)
    elif kind == "odd_json":
        out = _with_header(0, json.dumps(draw(odd_objects)).encode())
    elif kind == "odd_msgpack":
        try:
            header = msgpack.packb(draw(odd_objects), use_bin_type=True)
        except (OverflowError, ValueError, TypeError, UnicodeEncodeError):
            header = b"\xc1"
        out = _with_header(2, header)
    elif kind == "random":
        out = draw(st.binary(min_size=1, max_size=300))
    else:
        out = wire
    if draw(st.booleans()):  # cut anywhere
        out = out[: draw(st.integers(1, len(out)))]
    if draw(st.booleans()):  # and maybe a valid request right behind it
        out += encode_frame(RemotingCommand(FAST, opaque=12345))
    return out


@pytest.fixture
async def good_client(server: Served) -> AsyncIterator[tuple[RemotingClient, RemotingConnection]]:
    """One well-formed client on one connection, shared by every example of a test."""
    client = RemotingClient()
    conn = await client.get_connection(server.addr)
    yield client, conn
    await client.close()


@settings(
    max_examples=400,
    deadline=None,
    derandomize=True,  # the same examples every run: a CI failure reproduces locally
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(payload=payloads())
async def test_fuzzed_frames_close_only_their_connection(
    server: Served, good_client: tuple[RemotingClient, RemotingConnection], payload: bytes
) -> None:
    client, conn = good_client
    peer = await RawPeer.open(server.port)
    try:
        await peer.send(payload)
        peer.writer.write_eof()  # the server answers what it can, then closes on our FIN (or earlier on bad input)
        try:
            rest = await peer.read_until_eof(timeout=5)
        except ConnectionResetError:
            rest = b""
    finally:
        peer.close()
    replies = FrameDecoder()
    replies.feed(rest)
    for reply in replies.frames():  # whatever the server wrote is a well-formed response
        assert reply.is_response and all(isinstance(v, str) for v in reply.ext_fields.values())
    assert replies.buffered == 0

    resp = await client.invoke(server.addr, RemotingCommand.request(FAST, {"n": "still here"}), 5)
    assert resp.ext_fields == {"n": "still here"}
    assert await client.get_connection(server.addr) is conn and not conn.is_closed


async def test_random_bytes_on_many_connections_at_once(server: Served, loop_errors: list[dict[str, Any]]) -> None:
    """Seeded random garbage from 50 concurrent connections while a client keeps asking."""
    rnd = random.Random(20261123)

    async def hostile(i: int) -> None:
        peer = await RawPeer.open(server.port)
        try:
            for _ in range(rnd.randint(1, 4)):
                await peer.send(rnd.randbytes(rnd.randint(1, 512)))
            peer.writer.write_eof()
            try:
                await peer.read_until_eof(timeout=5)
            except ConnectionResetError:
                pass
        finally:
            peer.close()

    client = RemotingClient()
    conn = await client.get_connection(server.addr)

    async def asking() -> None:
        for n in range(50):
            resp = await client.invoke(server.addr, RemotingCommand.request(FAST, {"n": str(n)}), 5)
            assert resp.ext_fields == {"n": str(n)}

    await asyncio.gather(asking(), *(hostile(i) for i in range(50)))
    assert not conn.is_closed
    await client.close()
