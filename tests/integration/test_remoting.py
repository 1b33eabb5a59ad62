"""The asyncio remoting shell on real sockets: dispatch, unknown codes, oneway, held requests, errors, bad frames,
fuzzing, client timeouts, connection loss and reconnect."""

from __future__ import annotations

import asyncio
import json
import random
import struct
from collections.abc import AsyncIterator

import pytest

from protocol.codes import ResponseCode, SerializeType
from protocol.command import RemotingCommand
from protocol.errors import ConnectionClosedError, RequestTimeoutError
from protocol.frame import FrameDecoder, encode_frame
from protocol.remoting import HandlerError, HandlerRegistry, RemotingClient, RemotingServer, RequestContext

HOLD, FAST, BOOM, REFUSE, BACK = 1, 2, 3, 4, 5


class Server:
    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.held = asyncio.Event()
        self.reg = HandlerRegistry()
        self.reg.register(HOLD, self.hold)
        self.reg.register(FAST, self.fast)
        self.reg.register(BOOM, self.boom)
        self.reg.register(REFUSE, self.refuse)
        self.reg.register(BACK, self.back)
        self.seen: list[int] = []

    async def hold(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        self.held.set()
        await self.release.wait()
        return cmd.make_response(body=b"held")

    async def fast(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        self.seen.append(cmd.opaque)
        return cmd.make_response(ext_fields={"n": cmd.ext_fields.get("n", "")}, body=cmd.body)

    async def boom(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        raise RuntimeError("kaboom")

    async def refuse(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        raise HandlerError(ResponseCode.NO_PERMISSION, "not you")

    async def back(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        answer = await ctx.conn.invoke(RemotingCommand.request(77, {"q": "ping"}), 3.0)
        return cmd.make_response(body=answer.body)


@pytest.fixture
async def server() -> AsyncIterator[tuple[Server, RemotingServer]]:
    s = Server()
    srv = RemotingServer(s.reg, "127.0.0.1", 0)
    await srv.start()
    yield s, srv
    s.release.set()
    await srv.stop(grace=1.0)


async def raw_exchange(port: int, frames: list[bytes], expect: int, timeout: float = 5.0) -> list[RemotingCommand]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    for f in frames:
        writer.write(f)
    await writer.drain()
    dec = FrameDecoder()
    out: list[RemotingCommand] = []
    async with asyncio.timeout(timeout):
        while len(out) < expect:
            data = await reader.read(65536)
            if not data:
                break
            dec.feed(data)
            out.extend(dec.frames())
    writer.close()
    return out


async def test_unknown_code_answers_not_supported_with_same_opaque(server: tuple[Server, RemotingServer]) -> None:
    _s, srv = server
    client = RemotingClient()
    addr = f"127.0.0.1:{srv.port}"
    resp = await client.invoke(addr, RemotingCommand.request(9999), 3)
    assert resp.code == ResponseCode.REQUEST_CODE_NOT_SUPPORTED
    assert resp.remark == " request type 9999 not supported"
    assert (await client.invoke(addr, RemotingCommand.request(FAST, {"n": "1"}), 3)).ext_fields["n"] == "1"
    await client.close()


@pytest.mark.parametrize("st", list(SerializeType))
async def test_reply_uses_the_request_serialize_type(server: tuple[Server, RemotingServer], st: SerializeType) -> None:
    _s, srv = server
    req = RemotingCommand(code=FAST, opaque=42, ext_fields={"n": "7"}, serialize_type=st)
    [resp] = await raw_exchange(srv.port, [encode_frame(req)], 1)
    assert resp.serialize_type == st and resp.opaque == 42 and resp.ext_fields == {"n": "7"}
    if st == SerializeType.JSON:
        wire = encode_frame(resp)
        assert wire[4] == 0 and json.loads(wire[8 : 8 + struct.unpack_from(">I", wire, 4)[0]])


async def test_oneway_requests_are_never_answered(server: tuple[Server, RemotingServer]) -> None:
    s, srv = server
    oneway = RemotingCommand(code=FAST, opaque=1, flag=2)
    normal = RemotingCommand(code=FAST, opaque=2)
    replies = await raw_exchange(srv.port, [encode_frame(oneway), encode_frame(normal)], 1)
    assert [r.opaque for r in replies] == [2]
    assert 1 in s.seen  # the oneway request was still handled


async def test_held_request_does_not_delay_the_next_on_the_same_connection(
    server: tuple[Server, RemotingServer],
) -> None:
    s, srv = server
    client = RemotingClient()
    addr = f"127.0.0.1:{srv.port}"
    held = asyncio.create_task(client.invoke(addr, RemotingCommand.request(HOLD), 10))
    await s.held.wait()
    fast = await client.invoke(addr, RemotingCommand.request(FAST, {"n": "x"}), 3)
    assert fast.ext_fields["n"] == "x"
    assert not held.done()
    assert len(client.addresses) == 1  # one connection carried both
    s.release.set()
    assert (await held).body == b"held"
    await client.close()


async def test_handler_errors_become_replies(server: tuple[Server, RemotingServer]) -> None:
    _s, srv = server
    client = RemotingClient()
    addr = f"127.0.0.1:{srv.port}"
    resp = await client.invoke(addr, RemotingCommand.request(BOOM), 3)
    assert resp.code == ResponseCode.SYSTEM_ERROR and "kaboom" in (resp.remark or "")
    resp = await client.invoke(addr, RemotingCommand.request(REFUSE), 3)
    assert resp.code == ResponseCode.NO_PERMISSION and resp.remark == "not you"
    assert (await client.invoke(addr, RemotingCommand.request(FAST), 3)).code == ResponseCode.SUCCESS
    await client.close()


@pytest.mark.parametrize(
    "garbage",
    [
        struct.pack(">iI", 64 * 1024 * 1024, 10),
        struct.pack(">iI", 10, 100) + b"x" * 6,
        struct.pack(">iI", 6, (7 << 24) | 2) + b"{}",
        struct.pack(">iI", 9, 5) + b"{bad}",
    ],
)
async def test_bad_frame_closes_only_that_connection(server: tuple[Server, RemotingServer], garbage: bytes) -> None:
    _s, srv = server
    reader, writer = await asyncio.open_connection("127.0.0.1", srv.port)
    writer.write(garbage)
    await writer.drain()
    async with asyncio.timeout(5):
        assert await reader.read() == b""  # the server closed it
    writer.close()
    client = RemotingClient()
    assert (await client.invoke(f"127.0.0.1:{srv.port}", RemotingCommand.request(FAST), 3)).code == 0
    await client.close()


async def test_fuzzed_connections_leave_the_server_serving(server: tuple[Server, RemotingServer]) -> None:
    _s, srv = server
    rnd = random.Random(20261123)
    valid = [
        encode_frame(
            RemotingCommand(
                code=FAST, opaque=i, ext_fields={"k": "v" * i}, body=b"b" * i, serialize_type=SerializeType(i % 3)
            )
        )
        for i in range(1, 20)
    ]

    def mutate(frame: bytes) -> bytes:
        b = bytearray(frame)
        for _ in range(rnd.randint(1, 6)):
            b[rnd.randrange(len(b))] = rnd.randrange(256)
        cut = rnd.randint(1, len(b))
        return bytes(b[:cut])

    for i in range(150):
        payload = rnd.randbytes(rnd.randint(1, 200)) if i % 3 == 0 else mutate(rnd.choice(valid))
        _reader, writer = await asyncio.open_connection("127.0.0.1", srv.port)
        writer.write(payload)
        await writer.drain()
        writer.close()
    client = RemotingClient()
    for n in range(5):
        resp = await client.invoke(f"127.0.0.1:{srv.port}", RemotingCommand.request(FAST, {"n": str(n)}), 3)
        assert resp.ext_fields["n"] == str(n)
    await client.close()


async def test_client_timeout_and_connection_loss(server: tuple[Server, RemotingServer]) -> None:
    s, srv = server
    client = RemotingClient()
    addr = f"127.0.0.1:{srv.port}"
    with pytest.raises(RequestTimeoutError):
        await client.invoke(addr, RemotingCommand.request(HOLD), 0.2)
    pending = asyncio.create_task(client.invoke(addr, RemotingCommand.request(HOLD), 10))
    await asyncio.sleep(0)
    await s.held.wait()
    (await client.get_connection(addr)).abort("test drops the connection")
    with pytest.raises(ConnectionClosedError):
        await pending
    # the next request dials again
    assert (await client.invoke(addr, RemotingCommand.request(FAST), 3)).code == 0
    await client.close()


async def test_client_reconnects_after_server_restart() -> None:
    s = Server()
    srv = RemotingServer(s.reg, "127.0.0.1", 0)
    await srv.start()
    port = srv.port
    client = RemotingClient()
    addr = f"127.0.0.1:{port}"
    assert (await client.invoke(addr, RemotingCommand.request(FAST), 3)).code == 0
    await srv.stop(grace=0.5)
    srv2 = RemotingServer(s.reg, "127.0.0.1", port)
    await srv2.start()
    try:
        assert (await client.invoke(addr, RemotingCommand.request(FAST), 3)).code == 0
    finally:
        await client.close()
        await srv2.stop(grace=0.5)


async def test_concurrent_first_requests_share_one_connection(server: tuple[Server, RemotingServer]) -> None:
    _s, srv = server
    client = RemotingClient()
    addr = f"127.0.0.1:{srv.port}"
    replies = await asyncio.gather(*(client.invoke(addr, RemotingCommand.request(FAST), 3) for _ in range(20)))
    assert all(r.code == 0 for r in replies)
    assert len(srv.connections) == 1
    await client.close()


async def test_server_can_call_back_the_client(server: tuple[Server, RemotingServer]) -> None:
    _s, srv = server
    reg = HandlerRegistry()

    async def pong(ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        return cmd.make_response(body=b"pong:" + cmd.ext_fields["q"].encode())

    reg.register(77, pong)
    client = RemotingClient(reg)
    resp = await client.invoke(f"127.0.0.1:{srv.port}", RemotingCommand.request(BACK), 3)
    assert resp.body == b"pong:ping"
    await client.close()


async def test_back_pressure_pauses_reading_at_the_in_flight_limit() -> None:
    s = Server()
    srv = RemotingServer(s.reg, "127.0.0.1", 0, max_in_flight=4)
    await srv.start()
    client = RemotingClient()
    addr = f"127.0.0.1:{srv.port}"
    try:
        held = [asyncio.create_task(client.invoke(addr, RemotingCommand.request(HOLD), 10)) for _ in range(20)]
        await s.held.wait()
        for _ in range(50):
            await asyncio.sleep(0)
        [conn] = srv.connections
        assert conn.in_flight <= 4 + 1
        s.release.set()
        done = await asyncio.gather(*held)
        assert all(r.body == b"held" for r in done)
    finally:
        await client.close()
        await srv.stop(grace=0.5)


async def test_stop_fails_pending_requests_after_grace(server: tuple[Server, RemotingServer]) -> None:
    s, srv = server
    client = RemotingClient()
    addr = f"127.0.0.1:{srv.port}"
    pending = asyncio.create_task(client.invoke(addr, RemotingCommand.request(HOLD), 10))
    await s.held.wait()
    await srv.stop(grace=0.2)
    with pytest.raises(ConnectionClosedError):
        await pending
    await client.close()
