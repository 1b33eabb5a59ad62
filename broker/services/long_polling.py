"""LongPollingService: parks pull requests that found nothing until a matching message arrives or they time out.

J's ``PullRequestHoldService`` re-checks held pulls every 5 s (1 s for short polling) and is also woken by the
reput service's ``notifyMessageArriving``. Here there is no polling timer: each held pull is a callback with its own
deadline (``park``), all served by one loop timer armed at the earliest (no timer handle made and cancelled per
hold: workload B parks and wakes a pull per message), and the store's arrival listener (fired after a
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
import collections
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
    """One held pull: the read it will run again, what its wake calls, and its deadline (loop time)."""

    __slots__ = ("deadline", "key", "on_wake", "request", "wake_on_arrival")

    def __init__(
        self,
        key: tuple[str, int],
        request: GetRequest,
        on_wake: Callable[[Wake], None],
        wake_on_arrival: bool,
        deadline: float,
    ) -> None:
        self.key = key
        self.request: GetRequest | None = request  # None once woken or dropped (nothing kept for the sweep)
        self.on_wake: Callable[[Wake], None] | None = on_wake  # None once woken or dropped
        self.wake_on_arrival = wake_on_arrival
        self.deadline = deadline


class LongPollingService:
    """Deadlines: the holds of one timeout sit in one deque in park order, so their deadlines are non-decreasing;
    one loop timer fires at the earliest head and times out every hold due. A woken hold stays in its deque (its
    fields cleared) until the sweep reaches it, or until such entries outnumber the live ones: then the deques
    are compacted, so memory stays proportional to the pulls held."""

    def __init__(self) -> None:
        self._held: dict[tuple[str, int], list[_Held]] = {}
        self._closed = False
        self._due: dict[float, collections.deque[_Held]] = {}  # timeout -> its holds, deadline order
        self._queued = 0  # entries in the deques, woken ones included
        self._live = 0  # holds not yet woken or dropped
        self._timer: asyncio.TimerHandle | None = None
        self._timer_at = 0.0

    @property
    def held_count(self) -> int:
        return sum(len(v) for v in self._held.values())

    @property
    def tracked(self) -> int:
        """Entries the deadline sweep keeps: the holds, and woken ones it has not reached yet (bounded by them)."""
        return self._queued

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
        if wake_on_arrival and max_offset_now is not None and max_offset_now(key[0], key[1]) > request.offset:
            on_wake(Wake.ARRIVED)
            return None
        loop = asyncio.get_running_loop()
        timeout = max(timeout_s, 0.0)
        deadline = loop.time() + timeout
        entry = _Held(key, request, on_wake, wake_on_arrival, deadline)
        self._held.setdefault(key, []).append(entry)
        due = self._due.get(timeout)
        if due is None:
            due = self._due[timeout] = collections.deque()
        due.append(entry)
        self._queued += 1
        self._live += 1
        if self._timer is None or deadline < self._timer_at:
            self._arm(loop, deadline)
        return entry

    def _arm(self, loop: asyncio.AbstractEventLoop, when: float) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer_at = when
        self._timer = loop.call_at(when, self._sweep)

    def _sweep(self) -> None:
        """The timer: time out every hold whose deadline passed, drop the woken entries met, re-arm at the earliest
        deadline left (none left: no timer)."""
        self._timer = None
        loop = asyncio.get_running_loop()
        now = loop.time()
        expired: list[_Held] = []
        earliest = -1.0
        for timeout, due in list(self._due.items()):
            while due and (due[0].on_wake is None or due[0].deadline <= now):
                entry = due.popleft()
                self._queued -= 1
                if entry.on_wake is not None:
                    expired.append(entry)
            if due:
                if earliest < 0 or due[0].deadline < earliest:
                    earliest = due[0].deadline
            else:
                del self._due[timeout]
        if earliest >= 0:  # before the wakes: a pull parked from inside one compares its deadline with this
            self._arm(loop, earliest)
        for entry in expired:
            self._wake(entry, Wake.TIMEOUT)

    def _compact(self) -> None:
        """Keep only the live holds in the deadline deques (woken ones outnumbered them)."""
        for timeout, due in list(self._due.items()):
            kept = collections.deque(e for e in due if e.on_wake is not None)
            if kept:
                self._due[timeout] = kept
            else:
                del self._due[timeout]
        self._queued = sum(len(due) for due in self._due.values())

    def drop(self, entry: _Held) -> bool:
        """Stop holding ``entry`` (the sweep forgets it); False when it was already woken or dropped."""
        if entry.on_wake is None:
            return False
        entry.on_wake = None
        entry.request = None
        self._live -= 1
        if self._queued > 2 * self._live + 64:
            self._compact()
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
            request = entry.request
            if request is None or not entry.wake_on_arrival or next_offset <= request.offset:
                continue
            f = request.filter
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
            if entry.request is not None and entry.request.group == group
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
        self._due.clear()
        self._queued = 0
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if held:
            _log.info("released held pulls", count=len(held))
        return len(held)
