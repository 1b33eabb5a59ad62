"""Deferred replies over a real socket: a handler that returns a ``DeferredReply`` is answered when someone resolves
it, with no Task; meanwhile it counts as in flight (back-pressure, graceful stop), other requests are answered, one
resolved before the connection took it is still answered, and one resolved after the peer left is dropped."""

from __future__ import annotations

import asyncio
from typing import Any

from protocol.command import RemotingCommand
from protocol.frame import encode_frame
from protocol.remoting import RequestContext
from protocol.remoting.handler import DeferredReply
from tests.integration.remoting_support import FAST, Handlers, RawPeer, loop_errors, start

__all__ = ["loop_errors"]  # fixture

DEFER, DEFER_NOW = 40, 41


class DeferHandlers(Handlers):
    def __init__(self, target: int = 1) -> None:
        super().__init__()
        self.target = target  # parked_event is set once this many requests are parked
        self.parked: list[tuple[RemotingCommand, DeferredReply]] = []
        self.parked_event = asyncio.Event()
        self.tasks: list[str] = []
        self.reg.register(DEFER, self.defer)
        self.reg.register(DEFER_NOW, self.defer_now)

    async def defer(self, ctx: RequestContext, cmd: RemotingCommand) -> DeferredReply:
        task = asyncio.current_task()
        self.tasks.append(type(task).__name__ if task is not None else "inline")
        d = DeferredReply()
        self.parked.append((cmd, d))
        if len(self.parked) >= self.target:
            self.parked_event.set()
        return d

    async def defer_now(self, ctx: RequestContext, cmd: RemotingCommand) -> DeferredReply:
        d = DeferredReply()
        d.resolve(cmd.make_response(body=b"early"))  # before the connection has bound it
        return d

    def resolve_all(self) -> None:
        parked, self.parked = self.parked, []
        self.parked_event.clear()
        for cmd, d in parked:
            d.resolve(cmd.make_response(body=b"done %d" % cmd.opaque))
            d.resolve(cmd.make_response(body=b"twice"))  # a second resolve is ignored


def req(code: int, opaque: int) -> bytes:
    return encode_frame(RemotingCommand(code=code, opaque=opaque))


async def test_a_deferred_reply_is_written_when_resolved_and_counts_in_flight_meanwhile(
    loop_errors: list[dict[str, Any]],
) -> None:
    h = DeferHandlers()
    served = await start(h)
    peer = await RawPeer.open(served.port)
    try:
        await peer.send(req(DEFER, 1), req(DEFER, 2), req(FAST, 3), req(DEFER_NOW, 4))
        got = {(await peer.read()).opaque for _ in range(2)}
        assert got == {3, 4}  # answered while 1 and 2 wait
        [conn] = served.accepted
        assert conn.in_flight == 2 and len(h.parked) == 2 and h.tasks == ["inline", "inline"]
        h.resolve_all()
        replies = {(r := await peer.read()).opaque: r.body for _ in range(2)}
        assert replies == {1: b"done 1", 2: b"done 2"}
        assert conn.in_flight == 0
        await peer.send(req(FAST, 5))
        assert (await peer.read()).opaque == 5  # nothing else was written in between (no duplicate)
    finally:
        peer.close()
        await served.srv.stop(grace=1.0)


async def test_a_deferred_reply_resolved_after_the_peer_left_is_dropped(loop_errors: list[dict[str, Any]]) -> None:
    h = DeferHandlers()
    served = await start(h)
    peer = await RawPeer.open(served.port)
    try:
        await peer.send(req(DEFER, 1))
        await h.parked_event.wait()
        [conn] = served.accepted
        peer.close()
        await conn.closed_event.wait()
        h.resolve_all()  # no error reported to the loop (the fixture checks), nothing held
        assert conn.in_flight == 0
    finally:
        await served.srv.stop(grace=1.0)


async def test_deferred_replies_count_for_back_pressure(loop_errors: list[dict[str, Any]]) -> None:
    h = DeferHandlers(target=2)
    served = await start(h, max_in_flight=2)
    peer = await RawPeer.open(served.port)
    try:
        await peer.send(req(DEFER, 1), req(DEFER, 2), req(FAST, 3))
        await h.parked_event.wait()
        [conn] = served.accepted
        assert conn.reading_paused and h.seen == []  # the fast one waits behind the limit
        h.resolve_all()
        opaques = {(await peer.read()).opaque for _ in range(3)}
        assert opaques == {1, 2, 3} and not conn.reading_paused
    finally:
        peer.close()
        await served.srv.stop(grace=1.0)


async def test_stop_waits_for_deferred_replies(loop_errors: list[dict[str, Any]]) -> None:
    h = DeferHandlers()
    served = await start(h)
    peer = await RawPeer.open(served.port)
    await peer.send(req(DEFER, 1))
    await h.parked_event.wait()
    stopping = asyncio.create_task(served.srv.stop(grace=10))
    # a round trip on the open connection: by its end ``stop`` has run up to its wait for in-flight requests
    await peer.send(req(FAST, 2))
    assert (await peer.read()).opaque == 2
    assert not stopping.done() and not served.accepted[0].is_closed
    h.resolve_all()
    reply = await peer.read()
    assert reply.opaque == 1 and reply.body == b"done 1"
    await stopping
    peer.close()
