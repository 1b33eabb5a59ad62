"""A plain (``def``) handler over a real socket, as the send handler is: its returned reply is written with no
coroutine made; a ``HandlerError`` it raises is the reply's code and remark, any other exception SYSTEM_ERROR; a
``DeferredReply`` it returns is answered when resolved; a coroutine it returns (a send that must wait) is finished
in a Task, other requests answered meanwhile. A middleware awaits a plain inner handler through ``awaited``."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any

from protocol.codes import ResponseCode
from protocol.command import RemotingCommand
from protocol.frame import encode_frame
from protocol.remoting import RequestContext
from protocol.remoting.handler import DeferredReply, HandlerError, HandlerReply, awaited
from tests.integration.remoting_support import FAST, Handlers, RawPeer, loop_errors, start

__all__ = ["loop_errors"]  # fixture

PLAIN, PLAIN_REFUSE, PLAIN_BOOM, PLAIN_DEFER, PLAIN_WAIT, WRAPPED = 50, 51, 52, 53, 54, 55


class PlainHandlers(Handlers):
    def __init__(self) -> None:
        super().__init__()
        self.gate = asyncio.Event()
        self.deferred: list[DeferredReply] = []
        self.reg.register(PLAIN, self.plain)
        self.reg.register(PLAIN_REFUSE, self.plain_refuse)
        self.reg.register(PLAIN_BOOM, self.plain_boom)
        self.reg.register(PLAIN_DEFER, self.plain_defer)
        self.reg.register(PLAIN_WAIT, self.plain_wait)
        self.reg.register(WRAPPED, self.plain)
        self.reg.wrap(WRAPPED, self.middleware)

    def plain(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        return cmd.make_response(body=b"plain %d" % cmd.opaque)

    def plain_refuse(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        raise HandlerError(ResponseCode.NO_PERMISSION, "refused plainly")

    def plain_boom(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        raise RuntimeError("plain bug")

    def plain_defer(self, ctx: RequestContext, cmd: RemotingCommand) -> DeferredReply:
        d = DeferredReply()
        self.deferred.append(d)
        return d

    def plain_wait(self, ctx: RequestContext, cmd: RemotingCommand) -> Coroutine[Any, Any, RemotingCommand]:
        return self._waited(cmd)

    async def _waited(self, cmd: RemotingCommand) -> RemotingCommand:
        await self.gate.wait()
        task = asyncio.current_task()
        return cmd.make_response(body=b"waited in " + type(task).__name__.encode())

    def middleware(self, inner: Any) -> Any:
        async def wrapped(ctx: RequestContext, cmd: RemotingCommand) -> HandlerReply:
            reply = await awaited(inner(ctx, cmd))
            assert isinstance(reply, RemotingCommand)
            reply.body += b" wrapped"
            return reply

        return wrapped


def req(code: int, opaque: int) -> bytes:
    return encode_frame(RemotingCommand(code=code, opaque=opaque))


async def test_plain_handlers_answer_refuse_and_fail_like_coroutines(loop_errors: list[dict[str, Any]]) -> None:
    h = PlainHandlers()
    served = await start(h)
    peer = await RawPeer.open(served.port)
    try:
        await peer.send(req(PLAIN, 1), req(PLAIN_REFUSE, 2), req(PLAIN_BOOM, 3), req(WRAPPED, 4))
        got = {(r := await peer.read()).opaque: r for _ in range(4)}
        assert got[1].code == ResponseCode.SUCCESS and got[1].body == b"plain 1"
        assert (got[2].code, got[2].remark) == (ResponseCode.NO_PERMISSION, "refused plainly")
        assert got[3].code == ResponseCode.SYSTEM_ERROR and got[3].remark == "RuntimeError: plain bug"
        assert got[4].body == b"plain 4 wrapped"
        [conn] = served.accepted
        assert conn.in_flight == 0
    finally:
        peer.close()
        await served.srv.stop(grace=1.0)


async def test_a_plain_handlers_deferred_reply_and_coroutine_are_answered_later(
    loop_errors: list[dict[str, Any]],
) -> None:
    h = PlainHandlers()
    served = await start(h)
    peer = await RawPeer.open(served.port)
    try:
        await peer.send(req(PLAIN_WAIT, 1), req(PLAIN_DEFER, 2), req(FAST, 3))
        assert (await peer.read()).opaque == 3  # answered while 1 and 2 wait
        [conn] = served.accepted
        assert conn.in_flight == 2 and len(h.deferred) == 1
        h.gate.set()
        r1 = await peer.read()
        assert (r1.opaque, r1.body) == (1, b"waited in Task")
        cmd = RemotingCommand(code=PLAIN_DEFER, opaque=2)
        h.deferred[0].resolve(cmd.make_response(body=b"resolved"))
        r2 = await peer.read()
        assert (r2.opaque, r2.body) == (2, b"resolved")
        assert conn.in_flight == 0
    finally:
        peer.close()
        await served.srv.stop(grace=1.0)
