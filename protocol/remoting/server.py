"""RemotingServer: listen, accept, and hand every connection a ``RemotingConnection`` bound to one handler registry.

Dispatch, the unknown-code reply, exception → SYSTEM_ERROR mapping and back-pressure all live in the connection;
this module owns the listening socket, the deadline sweep and the shutdown order (uvicorn's: stop accepting, let
in-flight requests finish within a grace period, cancel the rest, close the sockets).

The sweep runs every ``SWEEP_S`` seconds (less for short deadlines) and asks each connection to close itself when it
has been idle for ``idle_timeout_s`` (J ``serverChannelMaxIdleTimeSeconds``, 120 s: clients heartbeat every 30 s, so
only dead or abandoned peers reach it) or has left a frame incomplete for ``frame_deadline_s`` (slow-loris peers).

Limits against a hostile peer: at most ``max_connections`` connections (one more is closed at once, and counted),
and at most ``max_pending_bytes`` buffered for incomplete frames over all connections (``PendingBudget``: over it
the connections holding the most are aborted). ``stats`` is a plain object with the counts (for metrics).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import structlog

from protocol.command import RemotingCommand
from protocol.frame import MAX_FRAME
from protocol.remoting.connection import DEFAULT_MAX_IN_FLIGHT, PendingBudget, RemotingConnection
from protocol.remoting.handler import Channel, HandlerRegistry

_log = structlog.get_logger("rocketq.remoting.server")

SWEEP_S = 5.0
MAX_CONNECTIONS = 10_000
MAX_PENDING_BYTES = 256 * 1024 * 1024


class ServerStats:
    """Counters of one server, read by metrics: plain attributes, no locking (one event loop)."""

    __slots__ = ("accepted", "refused")

    def __init__(self) -> None:
        self.accepted = 0
        self.refused = 0  # connections closed at once because max_connections was reached


class _Refused(asyncio.Protocol):
    """A connection over the limit: closed as soon as it is made."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        transport.abort()  # type: ignore[attr-defined]


IDLE_TIMEOUT_S = 120.0
FRAME_DEADLINE_S = 30.0


class RemotingServer:
    def __init__(
        self,
        registry: HandlerRegistry,
        host: str = "0.0.0.0",
        port: int = 0,
        *,
        max_frame: int = MAX_FRAME,
        max_in_flight: int = DEFAULT_MAX_IN_FLIGHT,
        on_connection: Callable[[RemotingConnection], None] | None = None,
        name: str = "remoting",
        idle_timeout_s: float = IDLE_TIMEOUT_S,
        frame_deadline_s: float = FRAME_DEADLINE_S,
        request_hook: Callable[[Channel, RemotingCommand], RemotingCommand | None] | None = None,
        max_connections: int = MAX_CONNECTIONS,
        max_pending_bytes: int = MAX_PENDING_BYTES,
    ) -> None:
        self.request_hook = request_hook
        self.max_connections = max_connections
        self.budget = PendingBudget(max_pending_bytes)
        self.stats = ServerStats()
        self._registry = registry
        self._host = host
        self._port = port
        self._max_frame = max_frame
        self._max_in_flight = max_in_flight
        self._on_connection = on_connection
        self._name = name
        self._server: asyncio.Server | None = None
        self._connections: set[RemotingConnection] = set()
        self._idle_s = idle_timeout_s
        self._frame_s = frame_deadline_s
        self._sweep: asyncio.TimerHandle | None = None

    @property
    def port(self) -> int:
        """The bound port (the real one when constructed with port 0)."""
        if self._server is None or not self._server.sockets:
            return self._port
        return int(self._server.sockets[0].getsockname()[1])

    @property
    def host(self) -> str:
        return self._host

    @property
    def connections(self) -> list[RemotingConnection]:
        return list(self._connections)

    @property
    def connection_count(self) -> int:
        return len(self._connections)

    @property
    def pending_bytes(self) -> int:
        """Bytes currently buffered for incomplete frames, all connections together."""
        return self.budget.total

    def _make_connection(self) -> asyncio.Protocol:
        if len(self._connections) >= self.max_connections:
            self.stats.refused += 1
            if self.stats.refused & (self.stats.refused - 1) == 0:  # 1st, 2nd, 4th, 8th…: a flood logs little
                _log.warning(
                    "connection limit reached, closing new connections",
                    server=self._name,
                    limit=self.max_connections,
                    refused=self.stats.refused,
                )
            return _Refused()
        self.stats.accepted += 1
        conn = RemotingConnection(
            self._registry,
            max_frame=self._max_frame,
            max_in_flight=self._max_in_flight,
            on_close=self._connections.discard,
            role=self._name,
            request_hook=self.request_hook,
            budget=self.budget,
        )
        self._connections.add(conn)
        if self._on_connection is not None:
            self._on_connection(conn)
        return conn

    async def start(self) -> None:
        """Bind and listen; raises OSError (e.g. address in use) for the caller to report."""
        loop = asyncio.get_running_loop()
        self._server = await loop.create_server(self._make_connection, self._host, self._port, reuse_address=True)
        _log.info("listening", server=self._name, host=self._host, port=self.port)
        self._schedule_sweep()

    def _sweep_every(self) -> float:
        deadlines = [d for d in (self._idle_s, self._frame_s) if d > 0]
        return min([SWEEP_S, *(d / 4 for d in deadlines)])

    def _schedule_sweep(self) -> None:
        if self._idle_s > 0 or self._frame_s > 0:
            self._sweep = asyncio.get_running_loop().call_later(self._sweep_every(), self._run_sweep)

    def _run_sweep(self) -> None:
        now = asyncio.get_running_loop().time()
        for conn in list(self._connections):
            conn.check_deadlines(now, self._idle_s, self._frame_s)
        if self._sweep is not None:  # None once stop_accepting ran
            self._schedule_sweep()

    def stop_accepting(self) -> None:
        if self._sweep is not None:
            self._sweep.cancel()
            self._sweep = None
        if self._server is not None:
            self._server.close()

    async def stop(self, grace: float = 5.0) -> None:
        """Stop accepting, wait up to ``grace`` seconds for in-flight requests, then close every connection."""
        self.stop_accepting()
        conns = list(self._connections)
        if conns:
            waits = [asyncio.ensure_future(c.wait_idle()) for c in conns]
            _done, not_done = await asyncio.wait(waits, timeout=grace)
            for w in not_done:
                w.cancel()
            for c in conns:
                c.cancel_in_flight()
                c.close("server stopping")
            await asyncio.gather(*(asyncio.wait_for(c.closed_event.wait(), 1.0) for c in conns), return_exceptions=True)
        if self._server is not None:
            await self._server.wait_closed()
            self._server = None
        _log.info("stopped", server=self._name)
