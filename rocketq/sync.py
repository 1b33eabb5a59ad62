"""``rocketq.sync``: the blocking ``Producer``, ``PushConsumer`` and ``PullConsumer`` of ``client.sync``."""

from __future__ import annotations

import rocketq  # noqa: F401  (pins the top-level packages first: rocketq._packages)

# isort: split
from client.sync import Producer, PullConsumer, PushConsumer

__all__ = ["Producer", "PullConsumer", "PushConsumer"]
