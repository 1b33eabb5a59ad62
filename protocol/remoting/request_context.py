"""RequestContext: what a request handler gets besides the command (see ``protocol.remoting.handler``), built by
the connection for every request it routes to a handler; DeferredReply: the reply a handler returns before it exists
(every held pull's, every SYNC_FLUSH send's). Both compiled (pyproject.toml ``[tool.rocketq.compile]``);
``protocol.remoting.handler`` re-exports them."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from protocol.command import RemotingCommand

if TYPE_CHECKING:
    from protocol.remoting.handler import Channel


class RequestContext:
    """What a handler gets besides the command: the channel, the loop time its frame was read (``received_at``, so
    a handler can tell how long the request queued behind others: J's fast-failure check), and a logger bound
    lazily with code and opaque.

    Binding is lazy because most requests never log; the hot path must not pay for a bound logger per message.
    """

    __slots__ = ("_conn_log", "_log", "cmd", "conn", "long_polling", "received_at")

    def __init__(self, conn: Channel, cmd: RemotingCommand, conn_log: Any, received_at: float = 0.0) -> None:
        self.conn = conn
        self.cmd = cmd
        self.received_at = received_at
        # set by a handler that parked the request (a held pull): the RPC latency metric labels it is_long_polling
        self.long_polling = False
        self._conn_log = conn_log
        self._log: Any = None

    @property
    def log(self) -> Any:
        if self._log is None:
            self._log = self._conn_log.bind(code=self.cmd.code, opaque=self.cmd.opaque)
        return self._log


class DeferredReply:
    """A reply a handler returns before it exists. The code that completes the request calls ``resolve(reply)``
    once, on the loop (later calls are ignored); the connection that served the request writes it then. Resolved
    before the connection took it (``bind``), the reply is written at ``bind``. A handler that returns one must see
    to it that it is resolved (a timeout at the latest): until then the request counts as in flight."""

    __slots__ = ("_ctx", "_reply", "_resolved", "_sink")

    def __init__(self) -> None:
        self._sink: Callable[[RequestContext, RemotingCommand | None], None] | None = None
        self._ctx: RequestContext | None = None
        self._reply: RemotingCommand | None = None
        self._resolved = False

    def bind(self, sink: Callable[[RequestContext, RemotingCommand | None], None], ctx: RequestContext) -> None:
        """The connection's side: ``sink(ctx, reply)`` once the reply is there."""
        if self._resolved:
            sink(ctx, self._reply)
        else:
            self._sink = sink
            self._ctx = ctx

    def resolve(self, reply: RemotingCommand | None) -> None:
        if self._resolved:
            return
        self._resolved = True
        sink = self._sink
        if sink is None:
            self._reply = reply
            return
        ctx = self._ctx
        self._sink = self._ctx = None
        assert ctx is not None
        sink(ctx, reply)
