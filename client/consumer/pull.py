"""PullConsumer ("lite pull"): the application polls, seeks and commits; the consumer fetches ahead.

Two ways to get queues (mutually exclusive, as in J's DefaultLitePullConsumer):

* ``subscribe(topic, expression)``: the group shares the topic's queues (``rebalance.py``: heartbeats with
  CONSUME_ACTIVELY, rebalance every 20 s and on NOTIFY_CONSUMER_IDS_CHANGED);
* ``assign(queues)``: exactly those queues, no group coordination.

For each owned queue a fetch task long-polls from the queue's position (a ``seek``, else the group's committed
offset, else per ``consume_from_where``: FIRST_OFFSET is 0, as in J's ``computePullFromWhere`` and the push consumer,
which the broker corrects with OFFSET_ILLEGAL and nextBeginOffset) into a buffer, pausing while the queue has ``pull_threshold_for_queue``
messages buffered or is ``pause``d. ``poll(timeout, max_records)`` returns buffered messages (waiting up to
``timeout`` s for some) and advances each queue's consumed position; ``commit()`` stores those positions on the
brokers for the group (or given offsets), and ``auto_commit`` does it every ``auto_commit_interval`` s and at
close. ``async for msg in consumer`` polls for ever.

``pull(queue, offset, max_nums)`` is the low-level single request, with no positions and no buffering: what the
Spark connector uses to read exact offset ranges.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import deque
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass, field
from typing import Unpack

from client._aio import StartClose, log_stop_failure
from client._dump import thread_dump
from client._log import get_logger
from client.config import PullConsumerConfig, split_options
from client.consumer.allocate import allocate_averagely
from client.consumer.options import PullConsumerOptions
from client.consumer.pulling import pull_once
from client.consumer.rebalance import Rebalancer
from client.consumer.selector import ALL, MessageSelector, as_selector
from client.errors import MQClientError
from client.instance import ClientInstance
from client.message import MessageQueue, validate_group, validate_topic
from client.results import PullResult, PullStatus
from protocol.bodies import (
    ConsumeFromWhere,
    ConsumerData,
    ConsumeType,
    MessageModel,
    encode_consumer_running_info,
)
from protocol.message_ext import MessageExt
from protocol.namespace import unwrap, wrap
from runtime.tasks import stop_tasks

_log = get_logger("rocketq.client.pull")

FETCH_DELAY_ON_ERROR = 1.0
_FROM_WHERE = {
    "LAST_OFFSET": "CONSUME_FROM_LAST_OFFSET",
    "FIRST_OFFSET": "CONSUME_FROM_FIRST_OFFSET",
    "TIMESTAMP": "CONSUME_FROM_TIMESTAMP",
}


@dataclass(slots=True)
class _Chunk:
    mq: MessageQueue
    generation: int
    msgs: list[MessageExt]
    next_offset: int


@dataclass(slots=True)
class _QueueState:
    fetch_offset: int | None = None  # next offset to pull
    consumed: int | None = None  # next offset the application has not polled yet (what commit stores)
    generation: int = 0  # bumped by seek/revoke: chunks and fetches of older generations are dropped
    cached: int = 0
    paused: bool = False
    task: asyncio.Task[None] | None = None
    wake: asyncio.Event = field(default_factory=asyncio.Event)


class PullConsumer(StartClose):
    """``PullConsumer(group, namesrv_addr=...)``; options are ``ClientConfig`` and ``PullConsumerConfig`` fields."""

    def __init__(
        self,
        group: str,
        namesrv_addr: str | None = None,
        *,
        instance: ClientInstance | None = None,
        **options: Unpack[PullConsumerOptions],
    ) -> None:
        validate_group(group)
        client_cfg, self.config = split_options({"namesrv_addr": namesrv_addr, **options}, PullConsumerConfig)
        self.namespace = self.config.namespace  # names are wrapped (``ns%topic``); polled messages unwrapped
        self.group = wrap(self.namespace, group)
        self.instance = instance or ClientInstance(config=client_cfg)
        self.consume_timestamp = self.config.consume_timestamp or int((time.time() - 1800) * 1000)
        self._subscriptions: dict[str, MessageSelector] = {}
        self._mode: str | None = None  # "subscribe" | "assign"
        self._states: dict[MessageQueue, _QueueState] = {}
        self._ready: deque[_Chunk] = deque()
        self._available = asyncio.Event()
        self._rebalancer = Rebalancer(
            self.instance,
            group,
            broadcasting=False,
            strategy=self.config.allocate_strategy or allocate_averagely,
            interval=self.config.rebalance_interval,
            topics=lambda: sorted(self._subscriptions),
            target=self,
        )
        self._registered = False
        self._auto_commit_task: asyncio.Task[None] | None = None
        self._started = False

    # -- lifecycle -------------------------------------------------------------------------------------------------

    async def start(self) -> None:
        if self._started:
            return
        self._started = True
        await self.instance.start()
        if self._mode == "subscribe":
            await self._join_group()
        for mq, st in self._states.items():
            self._start_fetch(mq, st)
        if self.config.auto_commit:
            self._auto_commit_task = asyncio.get_running_loop().create_task(
                self._auto_commit_loop(), name=f"auto-commit-{self.group}"
            )

    async def _join_group(self) -> None:
        if not self._registered:
            self.instance.register_consumer(self)
            self._registered = True
        await self.instance.refresh_routes()
        await self.instance.send_heartbeat_to_all()
        await self._rebalancer.run_once()
        self._rebalancer.start()

    async def close(self) -> None:
        """Stop fetching; with ``auto_commit``, commit the consumed positions; leave the group; close."""
        if not self._started:
            return
        self._started = False
        await self._rebalancer.stop()
        await stop_tasks(self._auto_commit_task, on_error=log_stop_failure)
        self._auto_commit_task = None
        await self._stop_fetches(list(self._states))
        if self.config.auto_commit:
            await self._commit_quietly(list(self._states))
        if self._registered:
            await self.instance.unregister_from_brokers(None, self.group)
            self.instance.unregister_consumer(self)
            self._registered = False
        await self.instance.close()

    # -- group membership (ConsumerMember) -------------------------------------------------------------------------

    def topics(self) -> set[str]:
        return set(self._subscriptions) | {mq.topic for mq in self._states}

    def heartbeat_data(self) -> ConsumerData:
        return ConsumerData(
            group_name=self.group,
            consume_type=ConsumeType.CONSUME_ACTIVELY,
            message_model=MessageModel.CLUSTERING,
            consume_from_where=ConsumeFromWhere(_FROM_WHERE[self.config.consume_from_where]),
            subscription_data_set=[sel.subscription(topic) for topic, sel in sorted(self._subscriptions.items())],
        )

    def rebalance_soon(self) -> None:
        self._rebalancer.trigger()

    async def reset_offsets(self, topic: str, offsets: dict[MessageQueue, int]) -> None:
        for mq, off in offsets.items():
            if mq in self._states:
                await self.seek(mq, off, check=False)

    def running_info(self, jstack: bool = False) -> bytes:
        """GET_CONSUMER_RUNNING_INFO in J's shape; a pull consumer has no consume stats (J's lite pull consumer
        leaves statusTable empty too)."""
        table = {
            mq: {"commitOffset": st.consumed, "cachedMsgCount": st.cached, "droped": False, "locked": False}
            for mq, st in self._states.items()
        }
        return encode_consumer_running_info(
            {"PROP_CONSUME_TYPE": "CONSUME_ACTIVELY", "PROP_CLIENT_VERSION": "rocketq"},
            self.heartbeat_data().to_json()["subscriptionDataSet"],
            table,
            {},
            thread_dump() if jstack else None,
        )

    def consumer_status(self, topic: str) -> dict[MessageQueue, int]:
        return {mq: off for mq, off in self.consumed_positions().items() if mq.topic == topic}

    async def on_assigned(self, mqs: list[MessageQueue]) -> list[MessageQueue]:
        for mq in mqs:
            st = self._states.setdefault(mq, _QueueState())
            if self._started:
                self._start_fetch(mq, st)
        return list(mqs)

    async def on_revoked(self, mqs: list[MessageQueue]) -> None:
        if self.config.auto_commit:
            await self._commit_quietly(mqs)
        await self._stop_fetches(mqs)
        for mq in mqs:
            self._states.pop(mq, None)

    # -- metadata --------------------------------------------------------------------------------------------------

    async def fetch_subscribe_queues(self, topic: str) -> list[MessageQueue]:
        """The topic's readable queues ([] when the topic does not exist)."""
        route = await self.instance.get_route(wrap(self.namespace, topic), refresh=True)
        return route.subscribe_queues() if route is not None else []

    async def fetch_topic_list(self) -> list[str]:
        return await self.instance.fetch_topic_list()

    async def _addr(self, mq: MessageQueue) -> str:
        return await self.instance.find_broker_addr(mq, master_only=False)

    async def min_offset(self, mq: MessageQueue) -> int:
        return await self.instance.api.get_min_offset(await self._addr(mq), mq, self.instance.request_timeout)

    async def max_offset(self, mq: MessageQueue) -> int:
        return await self.instance.api.get_max_offset(await self._addr(mq), mq, self.instance.request_timeout)

    async def search_offset(self, mq: MessageQueue, timestamp_ms: int) -> int:
        return await self.instance.api.search_offset(
            await self._addr(mq), mq, timestamp_ms, self.instance.request_timeout
        )

    async def committed(self, mq: MessageQueue) -> int | None:
        """The group's offset for ``mq`` on its broker (None when there is none)."""
        addr = await self.instance.find_broker_addr(mq, master_only=False)
        return await self.instance.api.query_consumer_offset(addr, self.group, mq, self.instance.request_timeout)

    # -- assignment ------------------------------------------------------------------------------------------------

    def subscribe(self, topic: str, expression: str | MessageSelector = "*") -> None:
        """Join the group's share of ``topic`` (tags ``"A || B"``, ``"*"`` or ``MessageSelector.by_sql(...)``)."""
        validate_topic(topic)
        if self._mode == "assign":
            raise MQClientError("subscribe and assign are mutually exclusive")
        self._mode = "subscribe"
        self._subscriptions[wrap(self.namespace, topic)] = as_selector(expression)
        if self._started:
            self.instance.spawn(self._join_group_again(), name=f"subscribe-{self.group}")

    async def _join_group_again(self) -> None:
        if not self._registered:
            await self._join_group()
            return
        await self.instance.refresh_routes()
        await self.instance.send_heartbeat_to_all()
        self._rebalancer.trigger()

    def unsubscribe(self, topic: str) -> None:
        self._subscriptions.pop(wrap(self.namespace, topic), None)
        if self._started:
            self._rebalancer.trigger()

    def assign(self, queues: Iterable[MessageQueue], expression: str | MessageSelector = "*") -> None:
        """Own exactly ``queues`` (positions of queues kept are kept); tags filter by ``expression``."""
        if self._mode == "subscribe":
            raise MQClientError("subscribe and assign are mutually exclusive")
        self._mode = "assign"
        ns = self.namespace
        wanted = {MessageQueue(wrap(ns, q.topic), q.broker_name, q.queue_id) if ns else q for q in queues}
        for topic in {mq.topic for mq in wanted}:
            self._subscriptions.setdefault(topic, as_selector(expression))
        for mq in [m for m in self._states if m not in wanted]:
            st = self._states.pop(mq)
            st.generation += 1
            if st.task is not None:
                st.task.cancel()
        for mq in sorted(wanted - set(self._states)):
            st = self._states[mq] = _QueueState()
            if self._started:
                self._start_fetch(mq, st)

    @property
    def assignment(self) -> list[MessageQueue]:
        return sorted(self._states)

    def pause(self, queues: Iterable[MessageQueue]) -> None:
        """Stop fetching and returning messages of ``queues`` until ``resume``."""
        for mq in queues:
            if mq in self._states:
                self._states[mq].paused = True

    def resume(self, queues: Iterable[MessageQueue]) -> None:
        for mq in queues:
            st = self._states.get(mq)
            if st is not None:
                st.paused = False
                st.wake.set()
        self._available.set()

    # -- positions -------------------------------------------------------------------------------------------------

    def _state(self, mq: MessageQueue) -> _QueueState:
        st = self._states.get(mq)
        if st is None:
            raise MQClientError(f"{mq} is not assigned to this consumer")
        return st

    async def seek(self, mq: MessageQueue, offset: int, *, check: bool = True) -> None:
        """Read ``mq`` from ``offset`` next (buffered messages of it are dropped). The offset must lie within the
        queue's ``[min_offset, max_offset]`` unless ``check=False``."""
        st = self._state(mq)
        if check:
            lo, hi = await asyncio.gather(self.min_offset(mq), self.max_offset(mq))
            if not lo <= offset <= hi:
                raise MQClientError(f"seek offset {offset} is outside [{lo}, {hi}] of {mq}")
        await self._stop_fetches([mq])
        st.fetch_offset = st.consumed = offset
        if self._started:
            self._start_fetch(mq, st)

    async def seek_to_beginning(self, mq: MessageQueue) -> None:
        await self.seek(mq, await self.min_offset(mq), check=False)

    async def seek_to_end(self, mq: MessageQueue) -> None:
        await self.seek(mq, await self.max_offset(mq), check=False)

    async def position(self, mq: MessageQueue) -> int:
        """The next offset ``poll`` returns for ``mq``."""
        st = self._state(mq)
        if st.consumed is None:
            st.consumed = st.fetch_offset = await self._initial_offset(mq)
        return st.consumed

    async def _initial_offset(self, mq: MessageQueue) -> int:
        off = await self.committed(mq)
        if off is not None and off >= 0:
            return off
        where = self.config.consume_from_where
        if where == "FIRST_OFFSET":
            return 0  # J computePullFromWhere: 0, which the broker corrects (OFFSET_ILLEGAL → nextBeginOffset)
        if where == "TIMESTAMP":
            return await self.search_offset(mq, self.consume_timestamp)
        return await self.max_offset(mq)

    # -- fetching --------------------------------------------------------------------------------------------------

    def _start_fetch(self, mq: MessageQueue, st: _QueueState) -> None:
        if st.task is None or st.task.done():
            st.task = asyncio.get_running_loop().create_task(
                self._fetch_loop(mq, st, st.generation), name=f"fetch-{mq.topic}-{mq.queue_id}"
            )

    async def _stop_fetches(self, mqs: list[MessageQueue]) -> None:
        tasks = []
        for mq in mqs:
            st = self._states.get(mq)
            if st is None:
                continue
            st.generation += 1
            st.cached = 0
            tasks.append(st.task)
            st.task = None
        await stop_tasks(*tasks, on_error=log_stop_failure)

    async def _fetch_loop(self, mq: MessageQueue, st: _QueueState, gen: int) -> None:
        cfg = self.config
        while self._started and st.generation == gen:
            try:
                if st.fetch_offset is None:
                    await self.position(mq)
                if st.paused or st.cached >= cfg.pull_threshold_for_queue:
                    st.wake.clear()
                    await st.wake.wait()
                    continue
                assert st.fetch_offset is not None
                res = await pull_once(
                    self.instance,
                    self.group,
                    mq,
                    st.fetch_offset,
                    cfg.pull_batch_size,
                    self._subscriptions.get(mq.topic, ALL),
                    suspend_ms=cfg.suspend_timeout_ms,
                    timeout=cfg.pull_timeout_ms / 1000,
                )
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                _log.warning("fetch failed", mq=str(mq), offset=st.fetch_offset, error=str(exc))
                await asyncio.sleep(FETCH_DELAY_ON_ERROR)
                continue
            if st.generation != gen:
                return
            if res.status is PullStatus.OFFSET_ILLEGAL:
                _log.warning(
                    "fetch offset illegal; moving on", mq=str(mq), offset=st.fetch_offset, next=res.next_begin_offset
                )
            if res.msg_found_list or res.next_begin_offset != st.fetch_offset:
                self._ready.append(_Chunk(mq, gen, res.msg_found_list, res.next_begin_offset))
                st.cached += len(res.msg_found_list)
                st.fetch_offset = res.next_begin_offset
                self._available.set()

    # -- reading ---------------------------------------------------------------------------------------------------

    def _take(self, limit: int) -> list[MessageExt]:
        out: list[MessageExt] = []
        skipped: list[_Chunk] = []
        while self._ready and len(out) < limit:
            chunk = self._ready.popleft()
            st = self._states.get(chunk.mq)
            if st is None or st.generation != chunk.generation:
                continue
            if st.paused:
                skipped.append(chunk)
                continue
            take = chunk.msgs[: limit - len(out)]
            out.extend(take)
            st.cached -= len(take)
            if len(take) < len(chunk.msgs):
                chunk.msgs = chunk.msgs[len(take) :]
                st.consumed = take[-1].queue_offset + 1
                self._ready.appendleft(chunk)
            else:
                st.consumed = chunk.next_offset
            if st.cached < self.config.pull_threshold_for_queue:
                st.wake.set()
        self._ready.extendleft(reversed(skipped))
        return out

    async def poll(self, timeout: float = 1.0, max_records: int | None = None) -> list[MessageExt]:
        """Up to ``max_records`` (default ``pull_batch_size``) messages from the owned queues, waiting up to
        ``timeout`` seconds for some to arrive; [] if none did."""
        if not self._started:
            raise MQClientError("the consumer is not started (use `async with` or `await start()`)")
        limit = max_records or self.config.pull_batch_size
        deadline = time.monotonic() + timeout
        while True:
            out = self._take(limit)
            if out:
                if self.namespace:
                    for m in out:
                        m.topic = unwrap(m.topic, self.namespace)
                return out
            left = deadline - time.monotonic()
            if left <= 0:
                return []
            self._available.clear()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(left):
                    await self._available.wait()

    def __aiter__(self) -> AsyncIterator[MessageExt]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[MessageExt]:
        while self._started:
            for msg in await self.poll(timeout=1.0):
                yield msg

    # -- committing ------------------------------------------------------------------------------------------------

    def consumed_positions(self) -> dict[MessageQueue, int]:
        """The next offset to poll for each owned queue that has one (what ``commit()`` stores)."""
        return {mq: st.consumed for mq, st in self._states.items() if st.consumed is not None}

    async def commit(self, offsets: dict[MessageQueue, int] | None = None) -> None:
        """Store ``offsets`` (default: the consumed positions) for the group on each queue's broker."""
        todo = offsets if offsets is not None else self.consumed_positions()

        async def one(mq: MessageQueue, off: int) -> None:
            addr = await self.instance.find_broker_addr(mq, master_only=False)
            await self.instance.api.update_consumer_offset(
                addr, self.group, mq, off, timeout=self.instance.request_timeout
            )

        await asyncio.gather(*(one(mq, off) for mq, off in todo.items()))

    async def _commit_quietly(self, mqs: list[MessageQueue]) -> None:
        positions = self.consumed_positions()
        try:
            await self.commit({mq: positions[mq] for mq in mqs if mq in positions})
        except Exception as exc:
            _log.warning("offset commit failed", group=self.group, error=str(exc))

    async def _auto_commit_loop(self) -> None:
        while True:
            await asyncio.sleep(self.config.auto_commit_interval)
            await self._commit_quietly(list(self._states))

    # -- low level -------------------------------------------------------------------------------------------------

    async def pull(
        self,
        mq: MessageQueue,
        offset: int,
        max_nums: int = 32,
        expression: str | MessageSelector = "*",
        *,
        block_ms: int = 0,
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
            timeout=self.config.pull_timeout_ms / 1000 if block_ms else self.instance.request_timeout + 7,
        )
