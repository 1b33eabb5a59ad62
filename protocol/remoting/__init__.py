"""The asyncio shell around the sans-IO codec: connections, a server, a client, and the handler seam."""

from __future__ import annotations

from protocol.remoting.client import RemotingClient, RemotingConnectError, split_addr
from protocol.remoting.connection import RemotingConnection
from protocol.remoting.handler import (
    Channel,
    Handler,
    HandlerError,
    HandlerRegistry,
    MissingFieldError,
    RequestContext,
)
from protocol.remoting.server import RemotingServer

__all__ = [
    "Channel",
    "Handler",
    "HandlerError",
    "HandlerRegistry",
    "MissingFieldError",
    "RemotingClient",
    "RemotingConnectError",
    "RemotingConnection",
    "RemotingServer",
    "RequestContext",
    "split_addr",
]
