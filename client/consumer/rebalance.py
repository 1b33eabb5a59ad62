"""Rebalancer: which queues of each subscribed topic this consumer owns, recomputed every ``interval`` (20 s) and
at once on ``trigger()`` (NOTIFY_CONSUMER_IDS_CHANGED from a broker, a changed route, a new subscription).

One round, per subscribed topic (J ``RebalanceImpl.rebalanceByTopic``):

1. the topic's readable queues from its route;
2. clustering: the group's client ids from one of the topic's brokers (GET_CONSUMER_LIST_BY_GROUP), then the
   allocation strategy's share for this client id (``allocate.py``); broadcasting: every queue;
3. queues no longer ours are revoked first (``on_revoked``: the owner stops pulling, persists the offset and drops
   the process queue), then new ones are offered (``on_assigned``, which returns those it took — an orderly
   consumer takes only those it could lock; the others are offered again next round).

If the broker's list does not hold our client id yet (our heartbeat is still on its way), the round keeps the
current assignment and heartbeats instead of giving everything up. A round that could not decide a topic (no
route yet, no list, a queue it could not take) is retried after 1 s, 2 s… a few times instead of waiting the whole
interval. Topics no longer subscribed are revoked.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Sequence
from typing import Protocol

from client._aio import log_stop_failure
from client._log import get_logger
from client.consumer.allocate import Strategy
from client.instance import ClientInstance
from client.message import MessageQueue
from client.route import TopicRoute
from protocol.errors import RemotingError
from runtime.tasks import stop_tasks

_log = get_logger("rocketq.client.rebalance")

QUICK_RETRIES = 5  # an undecided round is retried after 1 s, 2 s, … before falling back to `interval`
QUICK_RETRY_DELAY = 1.0


class RebalanceTarget(Protocol):
    async def on_revoked(self, mqs: list[MessageQueue]) -> None: ...

    async def on_assigned(self, mqs: list[MessageQueue]) -> list[MessageQueue]: ...


class Rebalancer:
    def __init__(
        self,
        instance: ClientInstance,
        group: str,
        *,
        broadcasting: bool,
        strategy: Strategy,
        interval: float,
        topics: Callable[[], Sequence[str]],
        target: RebalanceTarget,
    ) -> None:
        self.instance = instance
        self.group = group
        self.broadcasting = broadcasting
        self.strategy = strategy
        self.interval = interval
        self._topics = topics
        self._target = target
        self.owned: dict[str, set[MessageQueue]] = {}
        self._event = asyncio.Event()
        self._lock = asyncio.Lock()
        self._task: asyncio.Task[None] | None = None
        self._cid_broker = 0
        self._retries = 0
        self.rounds = 0

    def assignment(self) -> list[MessageQueue]:
        return sorted(mq for mqs in self.owned.values() for mq in mqs)

    def trigger(self) -> None:
        """Rebalance as soon as possible (the loop wakes now instead of at the next interval)."""
        self._event.set()

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._loop(), name=f"rebalance-{self.group}")

    async def stop(self) -> None:
        await stop_tasks(self._task, on_error=log_stop_failure)
        self._task = None

    async def _loop(self) -> None:
        while True:
            # asyncio.timeout, not wait_for: 3.11's wait_for swallows a cancel that races the event being set
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self.interval):
                    await self._event.wait()
            self._event.clear()
            try:
                await self.run_once()
            except Exception as exc:  # never let the loop die
                _log.warning("rebalance failed", group=self.group, error=repr(exc))

    async def run_once(self) -> None:
        async with self._lock:
            self.rounds += 1
            topics = list(self._topics())
            for topic in [t for t in self.owned if t not in topics]:
                gone = sorted(self.owned.pop(topic))
                if gone:
                    await self._target.on_revoked(gone)
            incomplete = False
            for topic in topics:
                try:
                    incomplete |= not await self._rebalance_topic(topic)
                except RemotingError as exc:
                    incomplete = True
                    _log.warning("rebalance of topic failed", group=self.group, topic=topic, error=str(exc))
            # a topic without a route yet (a retry topic the broker creates on our first heartbeat), or a broker
            # that does not list us yet: try again soon rather than in `interval`
            self._retries = self._retries + 1 if incomplete else 0
            if incomplete and self._retries <= QUICK_RETRIES:
                asyncio.get_running_loop().call_later(QUICK_RETRY_DELAY * self._retries, self.trigger)

    async def revoke_all(self) -> None:
        async with self._lock:
            for topic in list(self.owned):
                gone = sorted(self.owned.pop(topic))
                if gone:
                    await self._target.on_revoked(gone)

    async def _rebalance_topic(self, topic: str) -> bool:
        """One topic's round; False when it could not be decided (no route, no consumer list)."""
        route = await self.instance.get_route(topic)
        if route is None:
            route = await self.instance.get_route(topic, refresh=True)
        if route is None:
            _log.info("no route for subscribed topic", group=self.group, topic=topic)
            return False
        mqs = route.subscribe_queues()
        if self.broadcasting:
            mine = mqs
        else:
            cids = await self._consumer_ids(route)
            if not cids:
                _log.info("no consumer ids for the group yet", group=self.group, topic=topic)
                return False
            if self.instance.client_id not in cids:
                _log.info("broker does not list this consumer yet; heartbeating", group=self.group, topic=topic)
                await self.instance.send_heartbeat_to_all()
                return False
            mine = self.strategy(self.group, self.instance.client_id, mqs, cids)
        wanted = set(mine)
        current = self.owned.setdefault(topic, set())
        removed = sorted(current - wanted)
        if removed:
            await self._target.on_revoked(removed)
            current.difference_update(removed)
        added = sorted(wanted - current)
        taken: list[MessageQueue] = []
        if added:
            taken = await self._target.on_assigned(added)
            current.update(taken)
        if removed or taken:
            _log.info(
                "rebalanced",
                group=self.group,
                topic=topic,
                client_id=self.instance.client_id,
                owned=len(current),
                added=len(taken),
                removed=len(removed),
            )
        return len(taken) == len(added)

    async def _consumer_ids(self, route: TopicRoute) -> list[str]:
        """The group's client ids from one of the topic's brokers (rotating, falling over to the next)."""
        addrs = sorted({a for bd in route.brokers.values() if (a := bd.any_addr())})
        for i in range(len(addrs)):
            addr = addrs[(self._cid_broker + i) % len(addrs)]
            try:
                cids = await self.instance.api.get_consumer_ids(addr, self.group, self.instance.request_timeout)
            except RemotingError as exc:
                _log.info("consumer list request failed", broker=addr, error=str(exc))
                continue
            if cids:
                self._cid_broker = (self._cid_broker + i) % len(addrs)
                return cids
        return []
