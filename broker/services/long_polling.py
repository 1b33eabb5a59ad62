"""LongPollingService: parks pull requests that found nothing until a matching message arrives or they time out.

J's ``PullRequestHoldService`` re-checks held pulls every 5 s (1 s for short polling) and is also woken by the
reput service's ``notifyMessageArriving``. Here there is no polling timer: each held pull is a future with its own
``call_later`` deadline, and the store's arrival listener (fired after a message is dispatched to its consume queue)
wakes the pulls parked on that (topic, queue) whose offset the message reaches and whose tag-hash filter it passes.
The pull handler then re-runs the read and answers.

A reset of a group's offsets (INVOKE_BROKER_TO_RESET_OFFSET) wakes that group's held pulls on the topic with
``RESET``: the client has dropped those queues and cannot resume them until their last pull is answered (librocketmq
1.2 loops in its rebalance, holding its consumer table, until it is), so they are answered at once rather than at the
end of the suspend timeout.

A hold never blocks anything else: the remoting layer gives a request its own task once its handler suspends, and
the hold is just an awaited future. On shutdown ``release_all`` wakes every held pull with ``SHUTDOWN`` so each is answered
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


def _resolve(fut: asyncio.Future[Wake], why: Wake) -> None:
    if not fut.done():
        fut.set_result(why)


class _Held:
    """One held pull: the read it will run again, and the future its wake resolves."""

    __slots__ = ("future", "request", "wake_on_arrival")

    def __init__(self, request: GetRequest, future: asyncio.Future[Wake], wake_on_arrival: bool) -> None:
        self.request = request
        self.future = future
        self.wake_on_arrival = wake_on_arrival


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

    async def hold(
        self,
        request: GetRequest,
        timeout_s: float,
        max_offset_now: Callable[[str, int], int] | None = None,
        *,
        wake_on_arrival: bool = True,
    ) -> Wake:
        """Wait until a message at or beyond the read's offset that passes its tag-hash filter (``message_filter``)
        arrives on its (topic, queue), or ``timeout_s`` passes. ``max_offset_now(topic, queue_id)`` (the store's) closes
        the race with a message dispatched after the caller's read but before this registration. ``wake_on_arrival=False`` is short polling:
        only the timeout (or shutdown) ends the hold, as J's ``shortPollingTimeMills`` hold does."""
        if self._closed:
            return Wake.SHUTDOWN
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[Wake] = loop.create_future()
        key = (request.topic, request.queue_id)
        offset = request.offset
        entry = _Held(request, fut, wake_on_arrival)
        self._held.setdefault(key, []).append(entry)
        timer = loop.call_later(max(timeout_s, 0.0), _resolve, fut, Wake.TIMEOUT)
        if wake_on_arrival and max_offset_now is not None and max_offset_now(key[0], key[1]) > offset:
            _resolve(fut, Wake.ARRIVED)
        try:
            return await fut
        finally:
            timer.cancel()
            waiting = self._held.get(key)
            if waiting is not None:
                try:
                    waiting.remove(entry)
                except ValueError:
                    pass
                if not waiting:
                    del self._held[key]

    def notify_arrival(self, arrival: Arrival) -> None:
        """The store's arrival listener: a message was dispatched; wakes the pulls it has news for."""
        waiting = self._held.get((arrival.topic, arrival.queue_id))
        if not waiting:
            return
        next_offset = arrival.next_offset
        for entry in waiting:
            if not entry.wake_on_arrival or next_offset <= entry.request.offset:
                continue
            match_code = entry.request.message_filter
            if match_code is None or match_code(arrival.tags_code):
                _resolve(entry.future, Wake.ARRIVED)

    def release_group(self, group: str, topic: str) -> int:
        """Wake ``group``'s pulls held on any queue of ``topic`` with RESET; returns how many were woken."""
        n = 0
        for (held_topic, _qid), waiting in self._held.items():
            if held_topic != topic:
                continue
            for entry in waiting:
                if entry.request.group == group and not entry.future.done():
                    _resolve(entry.future, Wake.RESET)
                    n += 1
        return n

    def release_all(self) -> int:
        """Wake every held pull with SHUTDOWN and refuse new holds; returns how many were held."""
        self._closed = True
        n = 0
        for waiting in self._held.values():
            for entry in waiting:
                if not entry.future.done():
                    n += 1
                _resolve(entry.future, Wake.SHUTDOWN)
        if n:
            _log.info("released held pulls", count=n)
        return n
