"""RemotingClient: one connection per remote address, request/response by opaque, oneway, reconnect on demand.

A connection that closes is forgotten; the next request to that address dials again (reconnect), so a restarted
broker or name server is picked up without restarting the client. Concurrent first requests to one address share a
single dial. Requests that the remote side sends us (broker → client) go to the optional ``registry``.
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Callable

import structlog

from protocol.codes import ResponseCode
from protocol.command import RemotingCommand
from protocol.errors import ConnectionClosedError, error_for
from protocol.frame import MAX_FRAME
from protocol.remoting.connection import CLIENT_BURST, RemotingConnection
from protocol.remoting.handler import HandlerRegistry

_log = structlog.get_logger("rocketq.remoting.client")


class RemotingConnectError(ConnectionClosedError):
    """The address could not be dialled."""


def split_addr(addr: str) -> tuple[str, int]:
    """``host:port`` or ``[v6]:port`` → (host, port)."""
    host, sep, port = addr.rpartition(":")
    if not sep or not port.isdigit() or not host:
        raise ValueError(f"bad address {addr!r}, expected host:port")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    return host, int(port)


class RemotingClient:
    def __init__(
        self,
        registry: HandlerRegistry | None = None,
        *,
        connect_timeout: float = 3.0,
        max_frame: int = MAX_FRAME,
        on_connection_closed: Callable[[str], None] | None = None,
        rpc_hook: Callable[[RemotingCommand], None] | None = None,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        self._ssl = ssl_context  # dial over TLS (J tls.enable)
        self._registry = registry
        self.rpc_hook = rpc_hook  # J RPCHook.doBeforeRequest: e.g. SessionCredentials.sign (ACL)
        self._connect_timeout = connect_timeout
        self._max_frame = max_frame
        self._conns: dict[str, RemotingConnection] = {}
        self._dialing: dict[str, asyncio.Future[RemotingConnection]] = {}
        self._on_closed = on_connection_closed
        self._closed = False

    def open_connection(self, addr: str) -> RemotingConnection | None:
        """The open connection to ``addr``, or None (then ``get_connection`` dials): the hot path's lookup, no
        coroutine."""
        conn = self._conns.get(addr)
        return conn if conn is not None and not conn.is_closed else None

    async def get_connection(self, addr: str) -> RemotingConnection:
        conn = self._conns.get(addr)
        if conn is not None and not conn.is_closed:
            return conn
        if self._closed:
            raise ConnectionClosedError("client is closed")
        dialing = self._dialing.get(addr)
        if dialing is not None:
            return await asyncio.shield(dialing)
        fut: asyncio.Future[RemotingConnection] = asyncio.get_running_loop().create_future()
        self._dialing[addr] = fut
        try:
            conn = await self._dial(addr)
        except BaseException as exc:
            fut.set_exception(exc)
            fut.exception()
            raise
        else:
            fut.set_result(conn)
            return conn
        finally:
            self._dialing.pop(addr, None)

    async def _dial(self, addr: str) -> RemotingConnection:
        host, port = split_addr(addr)
        loop = asyncio.get_running_loop()

        def factory() -> RemotingConnection:
            # inline=False: the requests a broker sends a client reach application code (transaction checks, consume
            # directly), which may use asyncio.timeout() at once; they are rare, so a Task each costs nothing
            return RemotingConnection(
                self._registry, max_frame=self._max_frame, role="client", inline=False, burst=CLIENT_BURST
            )

        try:
            async with asyncio.timeout(self._connect_timeout):  # not wait_for (see invoke)
                if self._ssl is None:
                    _t, conn = await loop.create_connection(factory, host, port)
                else:
                    _t, conn = await loop.create_connection(
                        factory, host, port, ssl=self._ssl, server_hostname=host if self._ssl.check_hostname else None
                    )
        except (OSError, TimeoutError, ssl.SSLError) as exc:
            raise RemotingConnectError(f"connect to {addr} failed: {exc or type(exc).__name__}") from None
        self._conns[addr] = conn
        conn.add_close_callback(lambda _c: self._forget(addr, conn))
        return conn

    def _forget(self, addr: str, conn: RemotingConnection) -> None:
        if self._conns.get(addr) is conn:
            del self._conns[addr]
            if self._on_closed is not None:
                self._on_closed(addr)

    async def invoke(self, addr: str, cmd: RemotingCommand, timeout: float = 3.0) -> RemotingCommand:
        """Send ``cmd`` and return the reply, whatever its code. Transport failures raise RemotingError."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        # asyncio.timeout, not wait_for: on 3.11 wait_for swallows the caller's cancellation when the inner call is
        # already done (a cached connection always is), so a task cancelled during a request would keep running
        async with asyncio.timeout(timeout):
            conn = await self.get_connection(addr)
        if self.rpc_hook is not None:
            self.rpc_hook(cmd)
        return await conn.invoke(cmd, max(deadline - loop.time(), 0.001))

    async def invoke_checked(
        self, addr: str, cmd: RemotingCommand, timeout: float = 3.0, ok: tuple[int, ...] = (ResponseCode.SUCCESS,)
    ) -> RemotingCommand:
        """Like ``invoke`` but raise the registered BrokerError subclass for any code outside ``ok``."""
        resp = await self.invoke(addr, cmd, timeout)
        if resp.code not in ok:
            raise error_for(resp.code, resp.remark, addr)
        return resp

    async def invoke_oneway(self, addr: str, cmd: RemotingCommand) -> None:
        conn = await self.get_connection(addr)
        if self.rpc_hook is not None:
            self.rpc_hook(cmd)
        conn.invoke_oneway(cmd)

    def close_connection(self, addr: str) -> None:
        conn = self._conns.pop(addr, None)
        if conn is not None:
            conn.close("closed by client")

    @property
    def addresses(self) -> list[str]:
        return list(self._conns)

    async def close(self) -> None:
        self._closed = True
        conns = list(self._conns.values())
        self._conns.clear()
        for conn in conns:
            conn.close("client closing")
        await asyncio.gather(*(asyncio.wait_for(c.closed_event.wait(), 1.0) for c in conns), return_exceptions=True)
