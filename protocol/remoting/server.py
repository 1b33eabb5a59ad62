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
import socket
import ssl
from collections.abc import Callable

import structlog

from protocol.command import RemotingCommand
from protocol.frame import MAX_FRAME
from protocol.remoting.connection import DEFAULT_MAX_IN_FLIGHT, RemotingConnection, RequestObserver
from protocol.remoting.handler import Channel, HandlerRegistry
from protocol.remoting.pending_budget import PendingBudget
from protocol.remoting.tls import TLS_HANDSHAKE, TlsMode

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
        observer: RequestObserver | None = None,
        request_hook: Callable[[Channel, RemotingCommand], RemotingCommand | None] | None = None,
        max_connections: int = MAX_CONNECTIONS,
        max_pending_bytes: int = MAX_PENDING_BYTES,
        tls_mode: TlsMode = "disabled",
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        if tls_mode != "disabled" and ssl_context is None:
            raise ValueError(f"tls.server.mode={tls_mode} needs an SSL context")
        self._tls_mode = tls_mode
        self._ssl = ssl_context
        self._listen: socket.socket | None = None
        self._accept_task: asyncio.Task[None] | None = None
        self._sniffing = 0
        self._sniffers: set[asyncio.Task[None]] = set()
        self.request_hook = request_hook
        self.max_connections = max_connections
        self.budget = PendingBudget(max_pending_bytes)
        self.stats = ServerStats()
        self._registry = registry
        self._observer = observer
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
        if self._listen is not None:
            return int(self._listen.getsockname()[1])
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

    def _make_connection(self) -> asyncio.BaseProtocol:
        if len(self._connections) + self._sniffing >= self.max_connections:
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
            observer=self._observer,
            request_hook=self.request_hook,
            budget=self.budget,
            offer_msgpack=True,
        )
        self._connections.add(conn)
        if self._on_connection is not None:
            self._on_connection(conn)
        return conn

    async def start(self) -> None:
        """Bind and listen; raises OSError (e.g. address in use) for the caller to report."""
        loop = asyncio.get_running_loop()
        if self._tls_mode == "disabled":
            self._server = await loop.create_server(self._make_connection, self._host, self._port, reuse_address=True)
        else:
            family = socket.AF_INET6 if ":" in self._host else socket.AF_INET
            self._listen = socket.create_server((self._host, self._port), family=family, backlog=1024)
            self._listen.setblocking(False)
            self._accept_task = loop.create_task(self._accept_loop(self._listen), name=f"{self._name}-accept")
        _log.info("listening", server=self._name, host=self._host, port=self.port, tls=self._tls_mode)
        self._schedule_sweep()

    async def _accept_loop(self, listen: socket.socket) -> None:
        """TLS permissive/enforcing: accept, peek at the first byte, then hand the socket to the loop as plain or
        TLS (J ``HandshakeHandler``). The peek leaves the byte in the kernel buffer for the real reader."""
        loop = asyncio.get_running_loop()
        while True:
            try:
                sock, _addr = await loop.sock_accept(listen)
            except OSError as exc:
                _log.warning("accept failed", server=self._name, error=str(exc))
                await asyncio.sleep(0.1)
                continue
            if len(self._connections) + self._sniffing >= self.max_connections:
                self.stats.refused += 1
                sock.close()
                continue
            self._sniffing += 1
            task = loop.create_task(self._sniff(sock))
            self._sniffers.add(task)
            task.add_done_callback(self._sniffed)

    def _sniffed(self, task: asyncio.Task[None]) -> None:
        self._sniffing -= 1
        self._sniffers.discard(task)
        if not task.cancelled() and task.exception() is not None:
            _log.info("connection dropped before it started", server=self._name, error=str(task.exception()))

    async def _sniff(self, sock: socket.socket) -> None:
        loop = asyncio.get_running_loop()
        sock.setblocking(False)
        ready: asyncio.Future[None] = loop.create_future()

        def wake() -> None:
            if not ready.done():
                ready.set_result(None)

        loop.add_reader(sock.fileno(), wake)
        try:
            async with asyncio.timeout(self._frame_s if self._frame_s > 0 else None):
                await ready
            first = sock.recv(1, socket.MSG_PEEK)
        except (TimeoutError, OSError, asyncio.CancelledError):
            loop.remove_reader(sock.fileno())
            sock.close()
            return
        loop.remove_reader(sock.fileno())
        tls = first == bytes([TLS_HANDSHAKE])
        if not first or (not tls and self._tls_mode == "enforcing"):
            if first:
                _log.info("plain connection refused: tls.server.mode=enforcing", server=self._name)
            sock.close()
            return
        try:
            await loop.connect_accepted_socket(
                self._make_connection, sock, ssl=self._ssl if tls else None, ssl_handshake_timeout=10.0 if tls else None
            )
        except (OSError, ssl.SSLError, TimeoutError, ConnectionError) as exc:
            _log.info("TLS handshake failed", server=self._name, error=str(exc))
            sock.close()

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
        if self._accept_task is not None:
            self._accept_task.cancel()
            self._accept_task = None
        for task in list(self._sniffers):  # peers that never sent their first byte
            task.cancel()
        if self._listen is not None:
            self._listen.close()

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
