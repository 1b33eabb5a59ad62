"""Shared pieces of the remoting transport tests: a handler set, a server fixture that also fails the test on any
error the event loop reports (a task exception never retrieved, a protocol callback that raised), and a raw-socket
peer that reads whole frames as bytes.

Codes served by ``Handlers``: HOLD waits on ``release``; FAST echoes ext fields and body; BOOM raises; REFUSE raises
HandlerError(NO_PERMISSION); BACK calls the client back with code 77 on the same connection; MISSING raises
MissingFieldError; AFTER_AWAIT suspends first, then uses the Task-only ``asyncio.timeout``.
"""

from __future__ import annotations

import asyncio
import gc
import struct
from collections.abc import AsyncIterator
from typing import Any

import pytest

from protocol.codes import ResponseCode
from protocol.command import RemotingCommand
from protocol.frame import FrameDecoder
from protocol.remoting import (
    HandlerError,
    HandlerRegistry,
    MissingFieldError,
    RemotingConnection,
    RemotingServer,
    RequestContext,
)

HOLD, FAST, BOOM, REFUSE, BACK, MISSING, AFTER_AWAIT, WHERE = 1, 2, 3, 4, 5, 6, 7, 8
CALLBACK_CODE = 77
UNKNOWN = 9999


class Handlers:
    def __init__(self, hold_target: int = 1) -> None:
        self.release = asyncio.Event()
        self.held = asyncio.Event()  # set when ``hold_target`` HOLD requests are waiting at once
        self.hold_target = hold_target
        self.holding = 0
        self.max_holding = 0
        self.seen: list[int] = []
        self.reg = HandlerRegistry()
        for code, handler in {
            HOLD: self.hold,
            FAST: self.fast,
            BOOM: self.boom,
            REFUSE: self.refuse,
            BACK: self.back,
            MISSING: self.missing,
            AFTER_AWAIT: self.after_await,
            WHERE: self.where,
        }.items():
            self.reg.register(code, handler)

    async def hold(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        self.holding += 1
        self.max_holding = max(self.max_holding, self.holding)
        if self.holding >= self.hold_target:
            self.held.set()
        try:
            await self.release.wait()
        finally:
            self.holding -= 1
        return cmd.make_response(body=b"held")

    async def fast(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        self.seen.append(cmd.opaque)
        return cmd.make_response(ext_fields=dict(cmd.ext_fields), body=cmd.body)

    async def boom(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        self.seen.append(cmd.opaque)
        raise RuntimeError("kaboom")

    async def refuse(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        raise HandlerError(ResponseCode.NO_PERMISSION, "not you")

    async def missing(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        raise MissingFieldError("topic")

    async def back(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        answer = await ctx.conn.invoke(RemotingCommand.request(CALLBACK_CODE, {"q": "ping"}), 3.0)
        return cmd.make_response(ext_fields={"answerCode": str(answer.code)}, body=answer.body)

    async def after_await(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        await asyncio.sleep(0)
        async with asyncio.timeout(5):  # needs a current Task: a handler that suspended runs in one
            await asyncio.sleep(0)
        task = asyncio.current_task()
        return cmd.make_response(remark=type(task).__name__ if task is not None else "no task")

    async def where(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        """Answers without suspending, saying whether it ran in a Task and how many requests were in flight."""
        task = asyncio.current_task()
        where = type(task).__name__ if task is not None else "inline"
        return cmd.make_response(remark=f"{where} {ctx.conn.in_flight}")


class Served:
    def __init__(self, handlers: Handlers, server: RemotingServer) -> None:
        self.h = handlers
        self.srv = server
        self.accepted: list[RemotingConnection] = []

    @property
    def port(self) -> int:
        return self.srv.port

    @property
    def addr(self) -> str:
        return f"127.0.0.1:{self.srv.port}"


@pytest.fixture
async def loop_errors() -> AsyncIterator[list[dict[str, Any]]]:
    """Every report to the loop's exception handler during the test; the test fails if there is one."""
    loop = asyncio.get_running_loop()
    errors: list[dict[str, Any]] = []
    previous = loop.get_exception_handler()
    loop.set_exception_handler(lambda _loop, context: errors.append(context))
    yield errors
    gc.collect()  # "Task exception was never retrieved" is reported when the task is collected
    loop.set_exception_handler(previous)
    assert not errors, [str(e.get("message")) + " " + repr(e.get("exception")) for e in errors]


async def start(handlers: Handlers, port: int = 0, **kwargs: Any) -> Served:
    served: Served
    srv = RemotingServer(handlers.reg, "127.0.0.1", port, on_connection=lambda c: served.accepted.append(c), **kwargs)
    served = Served(handlers, srv)
    await srv.start()
    return served


@pytest.fixture
async def server(loop_errors: list[dict[str, Any]]) -> AsyncIterator[Served]:
    served = await start(Handlers())
    yield served
    served.h.release.set()
    await served.srv.stop(grace=2.0)


def frame_parts(wire: bytes) -> tuple[int, bytes, bytes]:
    """(serialize type, header bytes, body) of one whole frame."""
    length, word = struct.unpack_from(">iI", wire)
    assert length == len(wire) - 4
    hlen = word & 0xFFFFFF
    return word >> 24, wire[8 : 8 + hlen], wire[8 + hlen :]


class RawPeer:
    """A plain socket speaking frames, for the bytes a real client would see."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer

    @classmethod
    async def open(cls, port: int) -> RawPeer:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        return cls(reader, writer)

    async def send(self, *frames: bytes) -> None:
        self.writer.write(b"".join(frames))
        await self.writer.drain()

    async def read_wire(self, timeout: float = 5.0) -> bytes:
        """The next whole frame, as the bytes on the wire."""
        async with asyncio.timeout(timeout):
            head = await self.reader.readexactly(4)
            (length,) = struct.unpack(">i", head)
            return head + await self.reader.readexactly(length)

    async def read(self, timeout: float = 5.0) -> RemotingCommand:
        dec = FrameDecoder()
        dec.feed(await self.read_wire(timeout))
        cmd = dec.next_frame()
        assert cmd is not None
        return cmd

    async def read_until_eof(self, timeout: float = 5.0) -> bytes:
        async with asyncio.timeout(timeout):
            return await self.reader.read()

    def close(self) -> None:
        self.writer.close()
