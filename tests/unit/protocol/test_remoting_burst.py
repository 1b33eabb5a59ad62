"""A connection made with ``burst=N`` hands its frames to the transport N at a time within one loop pass (the
client side: the broker starts on the first requests while the client still builds the rest); without it, the
frames of a pass leave together at the pass's end. Real sockets, no timing: the client connection's unsent-frame
list is inspected right after the pass in which every request was written."""

from __future__ import annotations

import asyncio

import pytest

from protocol.codes import ResponseCode
from protocol.command import RemotingCommand
from protocol.frame import SPLIT_BODY
from protocol.remoting.client import RemotingClient
from protocol.remoting.connection import CLIENT_BURST, RemotingConnection
from protocol.remoting.handler import HandlerRegistry, RequestContext

CODE = 10  # SEND_MESSAGE


async def _server(loop: asyncio.AbstractEventLoop) -> tuple[asyncio.Server, int]:
    async def handler(ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        return cmd.make_response(ResponseCode.SUCCESS, cmd.ext_fields["n"])

    registry = HandlerRegistry()
    registry.register(CODE, handler)
    server = await loop.create_server(lambda: RemotingConnection(registry), "127.0.0.1", 0)
    return server, server.sockets[0].getsockname()[1]


@pytest.mark.parametrize("body", [b"", b"b" * SPLIT_BODY], ids=["small", "large"])
@pytest.mark.parametrize("burst", [0, 4])
async def test_frames_of_one_pass_leave_burst_at_a_time(burst: int, body: bytes) -> None:
    loop = asyncio.get_running_loop()
    server, port = await _server(loop)
    _, client = await loop.create_connection(
        lambda: RemotingConnection(None, role="client", burst=burst), "127.0.0.1", port
    )
    try:
        replies = [
            asyncio.ensure_future(client.invoke(RemotingCommand.request(CODE, {"n": str(i)}, body), 10))
            for i in range(10)
        ]
        await asyncio.sleep(0)  # the ten invokes ran in the pass before this one and wrote their requests
        # the first request, alone in flight, leaves at once; of the other nine, a burst of 4 sends 4 + 4 and keeps
        # one for the pass's end, no burst keeps all nine; the burst counts frames, a large body being a part of its
        # own (after its frame's length words and header)
        parts = 2 if body else 1
        assert len(client._out) == (1 if burst else 9) * parts
        assert [r.remark for r in await asyncio.gather(*replies)] == [str(i) for i in range(10)]
        assert client._out == []
    finally:
        client.close()
        server.close()
        await server.wait_closed()


async def test_remoting_client_connections_write_in_bursts() -> None:
    loop = asyncio.get_running_loop()
    server, port = await _server(loop)
    rc = RemotingClient()
    try:
        n = CLIENT_BURST * 2 + 2
        replies = [
            asyncio.ensure_future(rc.invoke(f"127.0.0.1:{port}", RemotingCommand.request(CODE, {"n": str(i)}), 10))
            for i in range(n)
        ]
        assert [r.remark for r in await asyncio.gather(*replies)] == [str(i) for i in range(n)]
        (conn,) = rc._conns.values()
        assert conn._burst == CLIENT_BURST
    finally:
        await rc.close()
        server.close()
        await server.wait_closed()
