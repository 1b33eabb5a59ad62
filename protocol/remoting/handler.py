"""The seam between the remoting shell and the code that answers requests.

A handler is ``async def handler(ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand | DeferredReply |
None``, or a plain ``def`` returning the same or, when it must wait, a coroutine that finishes it (the send
handler: most sends answer at once, and a plain call makes no coroutine per request). It returns the reply (build it with ``cmd.make_response(...)``) or ``None`` for no reply (oneway requests are
never answered whatever the handler returns), or a ``DeferredReply`` that whoever finishes the work resolves later
(a SYNC_FLUSH send the group commit answers): the connection writes its reply then, with no Task and no coroutine
kept suspended in between; until then it counts as in flight. A handler may raise ``HandlerError(code, remark)`` to
answer with that code; any other exception becomes ``SYSTEM_ERROR`` with a remark, mapped in one place by the
server.

A handler runs inline, inside the socket's read callback, until it first suspends: one that answers without
suspending costs no Task, and its reply leaves with that read's single write. One that suspends continues in a Task
of its own from that point, so a slow handler never delays the others on its connection. Before its first
suspension a server-side handler has no current Task, so asyncio.timeout() / current_task() work only after it (the
client side, whose handlers reach application code, runs every request in a Task from the start).

``RequestContext.conn`` is the connection the request came in on: a server uses it to push requests back to that
peer (NOTIFY_CONSUMER_IDS_CHANGED, CHECK_TRANSACTION_STATE, GET_CONSUMER_RUNNING_INFO relays) and to learn when the
peer goes away.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Final, Protocol

from protocol.codes import ResponseCode
from protocol.command import RemotingCommand
from protocol.remoting.request_context import DeferredReply as DeferredReply  # defined apart to be compiled
from protocol.remoting.request_context import RequestContext as RequestContext

if TYPE_CHECKING:
    from protocol.codes import LanguageCode


class Channel(Protocol):
    """What a handler may do with the connection a request arrived on."""

    @property
    def peer(self) -> str:
        """Remote address as ``ip:port``."""

    @property
    def conn_id(self) -> int: ...

    @property
    def language(self) -> LanguageCode:
        """Language of the last request received on this connection (CPP, JAVA, …)."""

    @property
    def is_closed(self) -> bool: ...

    @property
    def in_flight(self) -> int:
        """Requests from the peer whose handler has not finished."""

    async def invoke(self, cmd: RemotingCommand, timeout: float) -> RemotingCommand:
        """Send a request to the peer and await its reply (raises RequestTimeoutError/ConnectionClosedError)."""

    def invoke_oneway(self, cmd: RemotingCommand) -> None:
        """Send a request with the ONEWAY flag; never waits."""

    def add_close_callback(self, cb: Callable[[Channel], None]) -> None:
        """Call ``cb(channel)`` once when the connection closes (at once if already closed)."""

    def close(self) -> None: ...


class ChannelState:
    """What every ``Channel`` implementation keeps alike (a remoting connection, a gRPC client's channel): its id,
    peer, language, closed flag and the close callbacks, which run once, in order, each failure logged."""

    _conn_id: int
    _peer: str
    _language: LanguageCode
    _closed: bool
    _close_callbacks: list[Callable[[Channel], None]]

    @property
    def peer(self) -> str:
        return self._peer

    @property
    def conn_id(self) -> int:
        return self._conn_id

    @property
    def language(self) -> LanguageCode:
        return self._language

    @property
    def is_closed(self) -> bool:
        return self._closed

    def add_close_callback(self, cb: Callable[[Channel], None]) -> None:
        if self._closed:
            cb(self)  # type: ignore[arg-type]  # a subclass implements the rest of Channel
        else:
            self._close_callbacks.append(cb)

    def _run_close_callbacks(self, log: Any) -> None:
        callbacks, self._close_callbacks = self._close_callbacks, []
        for cb in callbacks:
            try:
                cb(self)  # type: ignore[arg-type]
            except Exception:
                log.exception("close callback failed")


HandlerReply = RemotingCommand | DeferredReply | None
Handler = Callable[[RequestContext, RemotingCommand], Awaitable[HandlerReply] | HandlerReply]


async def awaited(got: Awaitable[HandlerReply] | HandlerReply) -> HandlerReply:
    """What a handler's call ``got`` answers, as an ``await``: the reply a plain handler returned, or what the
    coroutine of an ``async def`` one returns (a middleware awaits its inner handler through this)."""
    if got is None or isinstance(got, (RemotingCommand, DeferredReply)):
        return got
    return await got


class HandlerError(Exception):
    """Raised by a handler to answer with ``code`` and ``remark`` instead of SUCCESS."""

    def __init__(self, code: int, remark: str) -> None:
        super().__init__(remark)
        self.code = code
        self.remark = remark


class MissingFieldError(HandlerError):
    """A required header field is absent (J: "the custom field <x> is null")."""

    def __init__(self, name: str) -> None:
        super().__init__(ResponseCode.SYSTEM_ERROR, f"the custom field <{name}> is null")


UNSUPPORTED_WARN_INTERVAL: Final = 60.0
"""Seconds between two WARN lines for the same unsupported request code from the same peer host."""
_UNSUPPORTED_KEYS: Final = 1024  # (code, host) pairs remembered; beyond, the table starts over


class HandlerRegistry:
    """Request code → handler. ``register`` refuses duplicates so two modules cannot silently fight over a code.
    ``note_unsupported`` logs the requests no handler answers (REQUEST_CODE_NOT_SUPPORTED), rate-limited."""

    __slots__ = ("_unsupported", "handlers")

    def __init__(self) -> None:
        # code -> handler: read by the connection per request (a dict lookup, no call); changed only through the
        # methods below
        self.handlers: dict[int, Handler] = {}
        self._unsupported: dict[tuple[int, str], list[float]] = {}  # (code, host) -> [last WARN, suppressed since]

    def register(self, code: int, handler: Handler) -> None:
        if code in self.handlers:
            raise ValueError(f"request code {code} already has a handler")
        self.handlers[code] = handler

    def register_all(self, table: dict[int, Handler]) -> None:
        for code, handler in table.items():
            self.register(code, handler)

    def get(self, code: int) -> Handler | None:
        return self.handlers.get(code)

    def wrap(self, code: int, middleware: Callable[[Handler], Handler]) -> None:
        """Replace the handler of ``code`` by ``middleware(current)`` (it must already have one)."""
        current = self.handlers.get(code)
        if current is None:
            raise ValueError(f"request code {code} has no handler to wrap")
        self.handlers[code] = middleware(current)

    def __contains__(self, code: int) -> bool:
        return code in self.handlers

    def codes(self) -> frozenset[int]:
        """Every request code with a handler."""
        return frozenset(self.handlers)

    def note_unsupported(self, code: int, peer: str, log: Any) -> None:
        """A request with ``code`` from ``peer`` is answered REQUEST_CODE_NOT_SUPPORTED: one WARN naming both, at most
        once per ``UNSUPPORTED_WARN_INTERVAL`` per code and peer host (the next line counts those left out)."""
        key = (code, peer.rpartition(":")[0] or peer)
        now = time.monotonic()
        seen = self._unsupported.get(key)
        if seen is not None and now - seen[0] < UNSUPPORTED_WARN_INTERVAL:
            seen[1] += 1
            return
        if len(self._unsupported) >= _UNSUPPORTED_KEYS:
            self._unsupported.clear()
        self._unsupported[key] = [now, 0]
        log.warning("request code not supported", code=code, peer=peer, suppressed=int(seen[1]) if seen else 0)
