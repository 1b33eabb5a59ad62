"""LongPollingService: parks pull requests that found nothing until a matching message arrives or they time out.

J's ``PullRequestHoldService`` re-checks held pulls every 5 s (1 s for short polling) and is also woken by the
reput service's ``notifyMessageArriving``. Here there is no polling timer: each held pull is a callback with its own
``call_later`` deadline (``park``), and the store's arrival listener (fired after a
message is dispatched to its consume queue) wakes the pulls parked on that (topic, queue) whose offset the message
reaches and whose tag-hash filter it passes. The pull handler's callback then re-runs the read and answers, right
there, inside the put that stored the message: the pull's reply leaves before the send's own (no Task woken, no
loop pass in between — workload B's latency).

A reset of a group's offsets (INVOKE_BROKER_TO_RESET_OFFSET) wakes that group's held pulls on the topic with
``RESET``: the client has dropped those queues and cannot resume them until their last pull is answered (librocketmq
1.2 loops in its rebalance, holding its consumer table, until it is), so they are answered at once rather than at the
end of the suspend timeout.

A hold never blocks anything else: the pull handler returns a ``DeferredReply`` that its wake resolves (no Task per
held pull). On shutdown ``release_all`` wakes every held pull with ``SHUTDOWN`` so each is answered
PULL_NOT_FOUND before the server stops.
"""

from __future__ import annotations

import asyncio
import enum
from collections.abc import Callable

import structlog

from broker.store.dispatcher import Arrival
from broker.store.request import GetRequest

_log = structlog.get_logger("rocketq.broker.long_polling")


class Wake(enum.Enum):
    ARRIVED = "arrived"
    TIMEOUT = "timeout"
    SHUTDOWN = "shutdown"
    RESET = "reset"


class _Held:
    """One held pull: the read it will run again, what its wake calls, and its deadline's timer."""

    __slots__ = ("key", "on_wake", "request", "timer", "wake_on_arrival")

    def __init__(
        self, key: tuple[str, int], request: GetRequest, on_wake: Callable[[Wake], None], wake_on_arrival: bool
    ) -> None:
        self.key = key
        self.request = request
        self.on_wake: Callable[[Wake], None] | None = on_wake  # None once woken or dropped
        self.wake_on_arrival = wake_on_arrival
        self.timer: asyncio.TimerHandle | None = None


class LongPollingService:
    def __init__(self) -> None:
        self._held: dict[tuple[str, int], list[_Held]] = {}
        self._closed = False

    @property
    def held_count(self) -> int:
        return sum(len(v) for v in self._held.values())

    def held_on(self, topic: str, queue_id: int) -> int:
        """How many pulls are held on (topic, queue_id)."""
        return len(self._held.get((topic, queue_id), ()))

    def park(
        self,
        request: GetRequest,
        timeout_s: float,
        on_wake: Callable[[Wake], None],
        max_offset_now: Callable[[str, int], int] | None = None,
        wake_on_arrival: bool = True,
    ) -> _Held | None:
        """Hold a pull until a message at or beyond the read's offset that passes its tag-hash filter (the read's
        ``filter.match_code``) arrives on its (topic, queue), or ``timeout_s`` passes; ``max_offset_now(topic, queue_id)``
        (the store's) closes the race with a message dispatched after the caller's read but before this registration;
        ``wake_on_arrival=False`` is short polling: only the timeout (or shutdown) ends the hold, as J's
        ``shortPollingTimeMills`` hold does. ``on_wake(why)`` is called exactly once, on the loop — from inside the
        store's arrival listener when a message wakes it (the pull is answered there, before the put's own reply),
        from this call itself when a message already arrived or the service is closed (then None is returned). It
        must not raise. Returns the entry while it is held."""
        if self._closed:
            on_wake(Wake.SHUTDOWN)
            return None
        key = (request.topic, request.queue_id)
        entry = _Held(key, request, on_wake, wake_on_arrival)
        if wake_on_arrival and max_offset_now is not None and max_offset_now(key[0], key[1]) > request.offset:
            entry.on_wake = None
            on_wake(Wake.ARRIVED)
            return None
        self._held.setdefault(key, []).append(entry)
        entry.timer = asyncio.get_running_loop().call_later(max(timeout_s, 0.0), self._wake, entry, Wake.TIMEOUT)
        return entry

    def drop(self, entry: _Held) -> bool:
        """Stop holding ``entry`` (its timer too); False when it was already woken or dropped."""
        if entry.on_wake is None:
            return False
        entry.on_wake = None
        if entry.timer is not None:
            entry.timer.cancel()
        waiting = self._held.get(entry.key)
        if waiting is not None:
            try:
                waiting.remove(entry)
            except ValueError:
                pass
            if not waiting:
                del self._held[entry.key]
        return True

    def _wake(self, entry: _Held, why: Wake) -> None:
        on_wake = entry.on_wake
        if on_wake is not None and self.drop(entry):
            on_wake(why)

    def notify_arrival(self, arrival: Arrival) -> None:
        """The store's arrival listener: a message was dispatched; wakes the pulls it has news for."""
        waiting = self._held.get((arrival.topic, arrival.queue_id))
        if not waiting:
            return
        next_offset = arrival.next_offset
        for entry in list(waiting):  # a wake removes its entry
            if not entry.wake_on_arrival or next_offset <= entry.request.offset:
                continue
            f = entry.request.filter
            match_code = None if f is None else f.match_code
            if match_code is None or match_code(arrival.tags_code):
                self._wake(entry, Wake.ARRIVED)

    def release_group(self, group: str, topic: str) -> int:
        """Wake ``group``'s pulls held on any queue of ``topic`` with RESET; returns how many were woken."""
        woken = [
            entry
            for (held_topic, _qid), waiting in self._held.items()
            if held_topic == topic
            for entry in waiting
            if entry.request.group == group
        ]
        for entry in woken:
            self._wake(entry, Wake.RESET)
        return len(woken)

    def release_all(self) -> int:
        """Wake every held pull with SHUTDOWN and refuse new holds; returns how many were held."""
        self._closed = True
        held = [entry for waiting in self._held.values() for entry in waiting]
        for entry in held:
            self._wake(entry, Wake.SHUTDOWN)
        if held:
            _log.info("released held pulls", count=len(held))
        return len(held)
