"""A held pull's reply (a handler that suspended with ``ctx.long_polling`` set) leaves in the loop pass that woke
it; any other reply written outside a read is coalesced and flushed one pass later. Real sockets, no timing: the
server connection's unsent-frame list is inspected one pass after the handler is woken."""

from __future__ import annotations

import asyncio

import pytest

from protocol.codes import ResponseCode
from protocol.command import RemotingCommand
from protocol.remoting.connection import RemotingConnection
from protocol.remoting.handler import HandlerRegistry, RequestContext
from tests.eventually import eventually

CODE = 11  # PULL_MESSAGE


@pytest.mark.parametrize("long_polling", [True, False])
async def test_held_reply_is_flushed_in_the_pass_that_woke_it(long_polling: bool) -> None:
    loop = asyncio.get_running_loop()
    wake: asyncio.Future[None] = loop.create_future()
    woken: asyncio.Future[None] = loop.create_future()

    async def handler(ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        ctx.long_polling = long_polling
        await wake
        woken.set_result(None)
        return cmd.make_response(ResponseCode.SUCCESS, "found")

    registry = HandlerRegistry()
    registry.register(CODE, handler)
    accepted: list[RemotingConnection] = []

    def factory() -> RemotingConnection:
        conn = RemotingConnection(registry)
        accepted.append(conn)
        return conn

    server = await loop.create_server(factory, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    _, client = await loop.create_connection(lambda: RemotingConnection(None, role="client"), "127.0.0.1", port)
    try:
        reply = asyncio.ensure_future(client.invoke(RemotingCommand.request(CODE, {}), 10))
        # the request was read and its handler suspended
        await eventually(lambda: accepted and accepted[0].in_flight > 0, what="the request in flight", step=0)
        server_conn = accepted[0]
        wake.set_result(None)
        await woken  # the handler's task resumed in this pass and has written its reply
        assert server_conn._out == ([] if long_polling else [server_conn._out[0]])
        assert (await reply).remark == "found"
    finally:
        client.close()
        server.close()
        await server.wait_closed()
