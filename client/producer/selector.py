"""Pure queue selection for producers: round robin with broker avoidance on retry, and latency fault avoidance.

``LatencyFaultTolerance`` (RocketMQ's sendLatencyFaultEnable): a send that took ``latency`` ms marks its broker
unavailable for a duration from the table below; while a broker is marked, round robin skips it unless every broker
is marked. The clock is injected so the behaviour is testable without waiting.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable

from client.message import MessageQueue

# RocketMQ MQFaultStrategy: latencyMax → notAvailableDuration (ms)
LATENCY_MAX = (50, 100, 550, 1000, 2000, 3000, 15000)
NOT_AVAILABLE_DURATION = (0, 0, 30000, 60000, 120000, 180000, 600000)


class LatencyFaultTolerance:
    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._until: dict[str, float] = {}

    def update(self, broker: str, latency_ms: float, *, isolation: bool = False) -> None:
        duration = 30000 if isolation else 0
        if not isolation:
            for i in range(len(LATENCY_MAX) - 1, -1, -1):
                if latency_ms >= LATENCY_MAX[i]:
                    duration = NOT_AVAILABLE_DURATION[i]
                    break
        if duration > 0:
            self._until[broker] = self._clock() + duration / 1000
        else:
            self._until.pop(broker, None)

    def available(self, broker: str) -> bool:
        until = self._until.get(broker)
        return until is None or self._clock() >= until


class QueueSelector:
    """Round robin over a topic's publish queues."""

    def __init__(self, fault: LatencyFaultTolerance | None = None) -> None:
        self._counter = itertools.count()
        self.fault = fault

    def select(self, queues: list[MessageQueue], last_broker: str | None = None) -> MessageQueue:
        if not queues:
            raise ValueError("no queue to select from")
        start = next(self._counter)
        n = len(queues)
        for i in range(n):
            mq = queues[(start + i) % n]
            if mq.broker_name == last_broker and any(q.broker_name != last_broker for q in queues):
                continue
            if self.fault is not None and not self.fault.available(mq.broker_name):
                continue
            return mq
        return queues[start % n]


def select_by_key(queues: list[MessageQueue], key: object) -> MessageQueue:
    """Ordered messages: the same sharding key always maps to the same queue (while the queue count holds)."""
    if not queues:
        raise ValueError("no queue to select from")
    h = _java_hash(str(key)) if not isinstance(key, int) else key
    return queues[abs(h) % len(queues)]


def _java_hash(s: str) -> int:
    h = 0
    for ch in s:
        h = (31 * h + ord(ch)) & 0xFFFFFFFF
    return h - 0x100000000 if h & 0x80000000 else h
