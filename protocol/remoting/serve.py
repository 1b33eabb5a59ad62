"""finish_request: the coroutine that awaits a request handler's reply and answers it, the outermost coroutine of
every request that suspends (and of every request on a connection made with ``inline=False``), kept out of the
compiled connection module on purpose.

asyncio continues a suspended handler by throwing a failed future's exception into the outermost coroutine of its
Task (or sending into it). A mypyc-compiled coroutine's ``throw()`` drops the thrown exception's traceback, so were
this coroutine compiled, a client's CONSUME_MESSAGE_DIRECTLY remark (J's ``exceptionSimpleDesc``: where the
listener raised) would name this function instead of the listener. Everything per frame that is not this coroutine
(frame parse, routing, a handler's first step, the reply's write) is the connection's, compiled
(pyproject.toml ``[tool.rocketq.compile]``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import TYPE_CHECKING

from protocol.command import RemotingCommand
from protocol.errors import ConnectionClosedError
from protocol.remoting.handler import DeferredReply, RequestContext
from protocol.remoting.rpc_stats import RESULT_SUCCESS

if TYPE_CHECKING:
    from protocol.remoting.connection import RemotingConnection


async def finish_request(
    conn: RemotingConnection,
    cmd: RemotingCommand,
    ctx: RequestContext,
    pending: Awaitable[RemotingCommand | DeferredReply | None],
) -> None:
    """Await ``pending`` (the handler's coroutine, or a ``ResumedHandler`` continuing one that ran inline) and answer
    with its reply; a handler's exception becomes the reply ``conn.reply_error`` maps it to."""
    result = RESULT_SUCCESS
    try:
        reply = await pending
    except asyncio.CancelledError:
        raise
    except Exception as exc:
        reply, result = conn.reply_error(cmd, exc)
    if conn.finish(cmd, ctx.received_at, ctx, reply, result):
        try:
            await conn.drain()
        except ConnectionClosedError:
            return
