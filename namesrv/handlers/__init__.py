"""Request handlers of the name server, one module per concern; each class gets only the collaborators it uses and
exposes ``table()`` (request code → handler) for ``HandlerRegistry.register_all``."""

from __future__ import annotations

from namesrv.handlers.broker import BrokerHandlers
from namesrv.handlers.kv import KvHandlers
from namesrv.handlers.route import RouteHandlers
from namesrv.handlers.settings import ConfigHandlers

__all__ = ["BrokerHandlers", "ConfigHandlers", "KvHandlers", "RouteHandlers"]
