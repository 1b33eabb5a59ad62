"""serve_request: the outermost coroutine of every request a ``RemotingConnection`` serves (handler call, error
mapping, deferred replies), kept out of the compiled connection module on purpose.

asyncio continues a suspended handler by throwing a failed future's exception into the outermost coroutine of its
Task (or sending into it). A mypyc-compiled coroutine's ``throw()`` drops the thrown exception's traceback, so were
this coroutine compiled, a client's CONSUME_MESSAGE_DIRECTLY remark (J's ``exceptionSimpleDesc``: where the
listener raised) would name this function instead of the listener. Everything per frame that is not this coroutine
(frame parse, routing, the reply's write) is the connection's, compiled (pyproject.toml ``[tool.rocketq.compile]``).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from protocol.codes import ResponseCode
from protocol.command import RemotingCommand
from protocol.errors import ConnectionClosedError
from protocol.remoting.handler import DeferredReply, HandlerError, RequestContext
from protocol.remoting.rpc_stats import RESULT_FAILED, RESULT_SUCCESS

if TYPE_CHECKING:
    from protocol.remoting.connection import RemotingConnection


async def serve_request(conn: RemotingConnection, cmd: RemotingCommand, received_at: float) -> None:
    """Answer ``cmd``: the connection's routing (ACL hook, unknown code) or its handler's reply, written by the
    connection; a ``DeferredReply`` is handed to the connection, which writes it once resolved."""
    handler, resp = conn.route(cmd)
    ctx: RequestContext | None = None
    result = RESULT_SUCCESS
    if handler is not None:
        ctx = RequestContext(conn, cmd, conn.log, received_at)
        try:
            reply = await handler(ctx, cmd)
            if isinstance(reply, DeferredReply):
                conn.defer(reply, ctx)
                return
            resp = reply
        except HandlerError as exc:
            resp = cmd.make_response(exc.code, exc.remark)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            conn.log.exception("handler failed", code=cmd.code, opaque=cmd.opaque)
            resp = cmd.make_response(ResponseCode.SYSTEM_ERROR, f"{type(exc).__name__}: {exc}")
            result = RESULT_FAILED
    if conn.answer(cmd, received_at, ctx, resp, result) and conn.write_paused:
        try:
            await conn.drain()
        except ConnectionClosedError:
            return
