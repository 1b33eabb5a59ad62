"""Request handlers of the name server, one module per concern; each class gets only the collaborators it uses and
exposes ``table()`` (request code → handler) for ``HandlerRegistry.register_all``. GET/UPDATE_NAMESRV_CONFIG are
``runtime.live_config.ConfigHandlers`` (the controller answers its config codes with them too)."""

from __future__ import annotations

from namesrv.handlers.broker import BrokerHandlers
from namesrv.handlers.kv import KvHandlers
from namesrv.handlers.route import RouteHandlers

__all__ = ["BrokerHandlers", "KvHandlers", "RouteHandlers"]
