"""The broker: handlers, services and the message store (``broker.store``); ``broker.app.BrokerApp`` wires them."""

from __future__ import annotations

import protocol  # noqa: F401  (chooses the compiled or the pure build, protocol.build, before any broker module)
