"""PullConsumer ("lite pull"): the application decides which queues to read and when to commit.

``subscribe(topic)`` takes every readable queue of the topic; ``assign(queues)`` takes exactly those. ``poll()``
pulls from the assigned queues in turn from each queue's position — a ``seek``, else the group's committed offset,
else the start or end of the queue per ``consume_from`` — and moves positions past what it returns. ``commit()``
stores positions (or given offsets) on the brokers for the group, so ``mqadmin``/stats show the lag. ``pull()`` is
the low-level single request, with no position bookkeeping.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable

from client.consumer.pulling import pull_once
from client.instance import ClientInstance
from client.message import MessageQueue
from client.results import PullResult, PullStatus
from protocol.message import MessageExt


class PullConsumer:
    def __init__(
        self,
        group: str,
        namesrv_addr: str | None = None,
        *,
        instance: ClientInstance | None = None,
        instance_name: str | None = None,
        pull_batch_size: int = 32,
        consume_from: str = "LAST_OFFSET",
        pull_timeout_ms: int = 10_000,
    ) -> None:
        if consume_from not in ("LAST_OFFSET", "FIRST_OFFSET"):
            raise ValueError("consume_from must be LAST_OFFSET or FIRST_OFFSET")
        self.group = group
        self.instance = instance or ClientInstance(namesrv_addr, instance_name=instance_name)
        self.pull_batch_size = pull_batch_size
        self.consume_from = consume_from
        self._timeout = pull_timeout_ms / 1000
        self._subscriptions: dict[str, str] = {}
        self._assigned: list[MessageQueue] = []
        self._positions: dict[MessageQueue, int] = {}
        self._next = 0
        self._started = False

    async def start(self) -> None:
        if not self._started:
            await self.instance.start()
            self._started = True

    async def close(self) -> None:
        if self._started:
            self._started = False
            await self.instance.close()

    async def __aenter__(self) -> PullConsumer:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def topics(self) -> set[str]:
        return set(self._subscriptions) | {mq.topic for mq in self._assigned}

    # -- metadata --------------------------------------------------------------------------------------------------

    async def fetch_subscribe_queues(self, topic: str) -> list[MessageQueue]:
        route = await self.instance.get_route(topic, refresh=True)
        return route.subscribe_queues() if route is not None else []

    async def fetch_topic_list(self) -> list[str]:
        return await self.instance.fetch_topic_list()

    async def _addr(self, mq: MessageQueue) -> str:
        return await self.instance.find_broker_addr(mq, master_only=False)

    async def min_offset(self, mq: MessageQueue) -> int:
        return await self.instance.api.get_min_offset(await self._addr(mq), mq)

    async def max_offset(self, mq: MessageQueue) -> int:
        return await self.instance.api.get_max_offset(await self._addr(mq), mq)

    async def search_offset(self, mq: MessageQueue, timestamp_ms: int) -> int:
        return await self.instance.api.search_offset(await self._addr(mq), mq, timestamp_ms)

    async def committed(self, mq: MessageQueue) -> int | None:
        return await self.instance.api.query_consumer_offset(await self.instance.find_broker_addr(mq), self.group, mq)

    # -- assignment and positions ----------------------------------------------------------------------------------

    async def subscribe(self, topic: str, expression: str = "*") -> list[MessageQueue]:
        self._subscriptions[topic] = expression
        queues = await self.fetch_subscribe_queues(topic)
        self.assign([*[q for q in self._assigned if q.topic != topic], *queues])
        return queues

    def assign(self, queues: Iterable[MessageQueue]) -> None:
        self._assigned = sorted(set(queues))
        self._positions = {mq: off for mq, off in self._positions.items() if mq in set(self._assigned)}

    @property
    def assignment(self) -> list[MessageQueue]:
        return list(self._assigned)

    async def seek(self, mq: MessageQueue, offset: int) -> None:
        self._positions[mq] = offset

    async def seek_to_beginning(self, mq: MessageQueue) -> None:
        self._positions[mq] = await self.min_offset(mq)

    async def seek_to_end(self, mq: MessageQueue) -> None:
        self._positions[mq] = await self.max_offset(mq)

    async def position(self, mq: MessageQueue) -> int:
        if mq not in self._positions:
            off = await self.committed(mq)
            if off is None or off < 0:
                off = await (self.min_offset(mq) if self.consume_from == "FIRST_OFFSET" else self.max_offset(mq))
            self._positions[mq] = off
        return self._positions[mq]

    # -- reading ---------------------------------------------------------------------------------------------------

    async def pull(
        self, mq: MessageQueue, offset: int, max_nums: int = 32, expression: str = "*", *, block_ms: int = 0
    ) -> PullResult:
        """One PULL_MESSAGE from ``offset``; ``block_ms`` > 0 lets the broker hold it that long (long polling)."""
        return await pull_once(
            self.instance,
            self.group,
            mq,
            offset,
            max_nums,
            expression,
            suspend_ms=block_ms,
            timeout=self._timeout + block_ms / 1000,
        )

    async def poll(self, timeout: float = 1.0, max_records: int | None = None) -> list[MessageExt]:
        """Messages from the assigned queues, waiting up to ``timeout`` seconds for some to arrive."""
        if not self._assigned:
            return []
        deadline = time.monotonic() + timeout
        limit = max_records or self.pull_batch_size
        while True:
            out: list[MessageExt] = []
            for _ in range(len(self._assigned)):
                mq = self._assigned[self._next % len(self._assigned)]
                self._next += 1
                offset = await self.position(mq)
                expr = self._subscriptions.get(mq.topic, "*")
                res = await self.pull(mq, offset, min(limit - len(out), self.pull_batch_size), expr)
                if res.status is PullStatus.OFFSET_ILLEGAL:
                    self._positions[mq] = res.next_begin_offset
                    continue
                self._positions[mq] = res.next_begin_offset
                out.extend(res.msg_found_list)
                if len(out) >= limit:
                    break
            if out:
                return out
            left = deadline - time.monotonic()
            if left <= 0:
                return []
            await asyncio.sleep(min(0.05, left))

    async def commit(self, offsets: dict[MessageQueue, int] | None = None) -> None:
        """Store ``offsets`` (default: the current positions) for the group on each queue's broker."""
        todo = offsets if offsets is not None else dict(self._positions)
        for mq, off in todo.items():
            addr = await self.instance.find_broker_addr(mq)
            await self.instance.api.update_consumer_offset(addr, self.group, mq, off)
