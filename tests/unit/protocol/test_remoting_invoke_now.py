"""``RemotingConnection.invoke(now=True)`` (a consumer's pull) writes its request in the pass that sent it; any other
request sent while others are in flight is coalesced and flushed one pass later. Real sockets, no timing: the client
connection's unsent-frame list is inspected in the pass right after the request was written."""

from __future__ import annotations

import asyncio

import pytest

from protocol.codes import ResponseCode
from protocol.command import RemotingCommand
from protocol.remoting.connection import RemotingConnection
from protocol.remoting.handler import HandlerRegistry, RequestContext
from tests.eventually import eventually

CODE = 11  # PULL_MESSAGE


@pytest.mark.parametrize("now", [True, False])
async def test_a_request_sent_now_leaves_in_the_pass_that_sent_it(now: bool) -> None:
    loop = asyncio.get_running_loop()
    release: asyncio.Future[None] = loop.create_future()

    async def handler(ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        await release
        return cmd.make_response(ResponseCode.SUCCESS, cmd.ext_fields["n"])

    registry = HandlerRegistry()
    registry.register(CODE, handler)
    server = await loop.create_server(lambda: RemotingConnection(registry), "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    _, client = await loop.create_connection(lambda: RemotingConnection(None, role="client"), "127.0.0.1", port)
    try:
        first = asyncio.ensure_future(client.invoke(RemotingCommand.request(CODE, {"n": "1"}), 10))
        await eventually(lambda: client._pending, what="the first request pending", step=0)
        assert client._out == []  # the only request in flight leaves at once either way
        second = asyncio.ensure_future(client.invoke(RemotingCommand.request(CODE, {"n": "2"}), 10, now=now))
        await asyncio.sleep(0)  # the second request's task ran in the pass before this one resumed
        assert len(client._pending) == 2
        assert len(client._out) == (0 if now else 1)
        release.set_result(None)
        assert [(await first).remark, (await second).remark] == ["1", "2"]
    finally:
        client.close()
        server.close()
        await server.wait_closed()
