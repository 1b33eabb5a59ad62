"""PushConsumer: subscribe with a listener; the consumer rebalances queues across its group, long-polls each of its
queues and calls the listener, committing offsets as messages are consumed.

Per assigned queue there is one pull task and a ``ProcessQueue``. Concurrent mode hands batches of
``consume_message_batch_max_size`` to the listener with at most ``consume_thread_max`` in flight; the offset to
commit is the smallest offset still in flight. Orderly mode locks the queue on its broker (LOCK_BATCH_MQ, renewed
every 20 s) and consumes one batch at a time in offset order. RECONSUME_LATER (or an exception) sends the message
back (CONSUMER_SEND_MSG_BACK; the broker re-delivers it through ``%RETRY%<group>`` after a delay, and to the DLQ
after ``max_reconsume_times``); if the send-back fails the message is consumed again locally after 5 s.

Flow control: a queue stops pulling while it holds more than ``pull_threshold_for_queue`` messages or
``pull_threshold_size_for_queue`` bytes, and resumes when consumption brings it below.

Rebalance runs every ``rebalance_interval`` (20 s) and at once when the broker sends NOTIFY_CONSUMER_IDS_CHANGED.
Offsets: on the brokers in clustering mode (``RemoteBrokerOffsetStore``), in a local file in broadcasting mode.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import time
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

import structlog

from client.consumer.allocate import Strategy, allocate_averagely
from client.consumer.offset_store import LocalFileOffsetStore, OffsetStore, RemoteBrokerOffsetStore
from client.consumer.process_queue import ProcessQueue
from client.consumer.pulling import RETRY_PREFIX, parse_tags, pull_once
from client.instance import ClientInstance
from client.message import MessageQueue
from client.results import ConsumeResult, PullStatus
from protocol.errors import RemotingError
from protocol.message import MessageExt, tag_hash

_log = structlog.get_logger("rocketq.client.push")

Listener = Callable[[list[MessageExt]], ConsumeResult | Awaitable[ConsumeResult]]

_FROM_WHERE = {
    "LAST_OFFSET": "CONSUME_FROM_LAST_OFFSET",
    "FIRST_OFFSET": "CONSUME_FROM_FIRST_OFFSET",
    "TIMESTAMP": "CONSUME_FROM_TIMESTAMP",
}
LOCK_RENEW_INTERVAL = 20.0
LOCAL_RETRY_DELAY = 5.0
SUSPEND_QUEUE_DELAY = 1.0


class PushConsumer:
    def __init__(
        self,
        group: str,
        namesrv_addr: str | None = None,
        *,
        instance: ClientInstance | None = None,
        instance_name: str | None = None,
        message_model: str = "CLUSTERING",
        consume_from_where: str = "LAST_OFFSET",
        consume_timestamp: int | None = None,
        orderly: bool = False,
        allocate_strategy: Strategy = allocate_averagely,
        pull_batch_size: int = 32,
        consume_message_batch_max_size: int = 1,
        pull_threshold_for_queue: int = 1000,
        pull_threshold_size_for_queue: int = 100 * 1024 * 1024,
        max_reconsume_times: int = 16,
        consume_thread_max: int = 20,
        rebalance_interval: float = 20.0,
        persist_interval: float = 5.0,
        suspend_timeout_ms: int = 15_000,
        offset_store_dir: str = "~/.rocketmq_offsets",
    ) -> None:
        if message_model not in ("CLUSTERING", "BROADCASTING"):
            raise ValueError("message_model must be CLUSTERING or BROADCASTING")
        self.group = group
        self.instance = instance or ClientInstance(namesrv_addr, instance_name=instance_name)
        self.message_model = message_model
        from_where = consume_from_where.removeprefix("CONSUME_FROM_")
        if from_where not in _FROM_WHERE:
            raise ValueError("consume_from_where must be LAST_OFFSET, FIRST_OFFSET or TIMESTAMP")
        self.consume_from_where = from_where
        self.consume_timestamp = consume_timestamp or int((time.time() - 1800) * 1000)
        self.orderly = orderly
        self.allocate = allocate_strategy
        self.pull_batch_size = pull_batch_size
        self.batch_max = max(1, consume_message_batch_max_size)
        self.threshold_count = pull_threshold_for_queue
        self.threshold_size = pull_threshold_size_for_queue
        self.max_reconsume_times = max_reconsume_times
        self.rebalance_interval = rebalance_interval
        self.persist_interval = persist_interval
        self.suspend_ms = suspend_timeout_ms
        self._subs: dict[str, tuple[str, Listener | None]] = {}
        self._default_listener: Listener | None = None
        self._sub_version = int(time.time() * 1000)
        self.offset_store: OffsetStore = (
            RemoteBrokerOffsetStore(self.instance.api, group, self.instance.find_broker_addr)
            if message_model == "CLUSTERING"
            else LocalFileOffsetStore(offset_store_dir, self.instance.client_id, group)
        )
        self._pqs: dict[MessageQueue, ProcessQueue] = {}
        self._pull_tasks: dict[MessageQueue, asyncio.Task[None]] = {}
        self._consume_tasks: set[asyncio.Task[None]] = set()
        self._start_override: dict[MessageQueue, int] = {}
        self._sem = asyncio.Semaphore(consume_thread_max)
        self._rebalance_event = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []
        self._running = False
        self._rebalance_lock = asyncio.Lock()
        self.consumed_ok = 0
        self.consumed_failed = 0

    # -- configuration ---------------------------------------------------------------------------------------------

    def subscribe(self, topic: str, expression: str = "*", listener: Listener | None = None) -> None:
        """Subscribe ``topic`` filtered by tags (``"TagA || TagB"`` or ``"*"``); ``listener(msgs)`` gets the batches
        (an ``async def`` or a plain function, which then runs in a worker thread)."""
        if topic.startswith(RETRY_PREFIX):
            raise ValueError("retry topics are subscribed automatically")
        parse_tags(expression)
        self._subs[topic] = (expression or "*", listener)
        if listener is not None and self._default_listener is None:
            self._default_listener = listener
        self._sub_version = int(time.time() * 1000)

    def register_listener(self, listener: Listener) -> None:
        self._default_listener = listener

    @property
    def retry_topic(self) -> str:
        return RETRY_PREFIX + self.group

    def _all_subs(self) -> dict[str, str]:
        subs = {t: e for t, (e, _l) in self._subs.items()}
        if self.message_model == "CLUSTERING":
            subs[self.retry_topic] = "*"
        return subs

    def topics(self) -> set[str]:
        return set(self._all_subs())

    def heartbeat_data(self) -> dict[str, Any]:
        subs = []
        for topic, expr in self._all_subs().items():
            tags = sorted(parse_tags(expr))
            subs.append(
                {
                    "topic": topic,
                    "subString": expr,
                    "tagsSet": tags,
                    "codeSet": [tag_hash(t) for t in tags],
                    "subVersion": self._sub_version,
                    "expressionType": "TAG",
                    "classFilterMode": False,
                }
            )
        return {
            "groupName": self.group,
            "consumeType": "CONSUME_PASSIVELY",
            "messageModel": self.message_model,
            "consumeFromWhere": _FROM_WHERE[self.consume_from_where],
            "subscriptionDataSet": subs,
            "unitMode": False,
        }

    # -- lifecycle -------------------------------------------------------------------------------------------------

    async def start(self) -> None:
        if self._running:
            return
        if not self._subs:
            raise ValueError("subscribe to at least one topic before start()")
        if self._default_listener is None:
            raise ValueError("no listener: pass one to subscribe() or register_listener()")
        self._running = True
        self.instance.register_consumer(self.group, self)
        await self.instance.start()
        await self.offset_store.load()
        for topic in self.topics():
            with contextlib.suppress(RemotingError):
                await self.instance.get_route(topic, refresh=True)
        await self.instance.send_heartbeat_to_all()
        loop = asyncio.get_running_loop()
        self._tasks = [
            loop.create_task(self._rebalance_loop(), name=f"rebalance-{self.group}"),
            loop.create_task(self._persist_loop(), name=f"persist-offsets-{self.group}"),
        ]
        await self.rebalance()

    async def close(self, drain_timeout: float = 5.0) -> None:
        if not self._running:
            return
        self._running = False
        for t in self._tasks:
            t.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._tasks = []
        for pq in self._pqs.values():
            pq.dropped = True
        for t in self._pull_tasks.values():
            t.cancel()
        await asyncio.gather(*self._pull_tasks.values(), return_exceptions=True)
        if self._consume_tasks:
            await asyncio.wait(list(self._consume_tasks), timeout=drain_timeout)
        for t in list(self._consume_tasks):
            t.cancel()
        await self.offset_store.persist(list(self._pqs))
        if self.orderly and self.message_model == "CLUSTERING":
            await self._unlock(list(self._pqs))
        self._pqs.clear()
        self._pull_tasks.clear()
        await self.instance.unregister_from_brokers(None, self.group)
        self.instance.unregister(self.group)
        await self.instance.close()

    async def __aenter__(self) -> PushConsumer:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # -- rebalance -------------------------------------------------------------------------------------------------

    def rebalance_soon(self) -> None:
        self._rebalance_event.set()

    async def _rebalance_loop(self) -> None:
        last_lock = time.monotonic()
        while self._running:
            interval = min(self.rebalance_interval, LOCK_RENEW_INTERVAL) if self.orderly else self.rebalance_interval
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._rebalance_event.wait(), interval)
            self._rebalance_event.clear()
            try:
                await self.rebalance()
                if self.orderly and time.monotonic() - last_lock >= LOCK_RENEW_INTERVAL:
                    await self._lock(list(self._pqs))
                    last_lock = time.monotonic()
            except Exception as exc:
                _log.warning("rebalance failed", group=self.group, error=str(exc))

    async def _persist_loop(self) -> None:
        await asyncio.sleep(min(10.0, self.persist_interval * 2))
        while self._running:
            try:
                await self.offset_store.persist(list(self._pqs))
            except Exception as exc:
                _log.warning("offset persist failed", group=self.group, error=str(exc))
            await asyncio.sleep(self.persist_interval)

    async def rebalance(self) -> None:
        async with self._rebalance_lock:
            for topic, expr in self._all_subs().items():
                try:
                    await self._rebalance_topic(topic, expr)
                except RemotingError as exc:
                    _log.warning("rebalance of topic failed", topic=topic, error=str(exc))

    async def _rebalance_topic(self, topic: str, expr: str) -> None:
        route = await self.instance.get_route(topic)
        if route is None:
            route = await self.instance.get_route(topic, refresh=True)
        if route is None:
            return
        mqs = route.subscribe_queues()
        if self.message_model == "BROADCASTING":
            mine = mqs
        else:
            addrs = sorted({bd.master_addr for bd in route.brokers.values() if bd.master_addr})
            if not addrs:
                return
            cids = await self.instance.api.get_consumer_ids(addrs[0], self.group)
            if not cids:
                return
            mine = self.allocate(self.group, self.instance.client_id, mqs, cids)
        wanted = set(mine)
        current = {mq for mq in self._pqs if mq.topic == topic}
        for mq in current - wanted:
            await self._revoke(mq)
        added = sorted(wanted - current)
        if added and self.orderly and self.message_model == "CLUSTERING":
            locked = await self._lock(added)
            added = [mq for mq in added if mq in locked]
        for mq in added:
            self._assign(mq, expr)
        if (current - wanted) or added:
            _log.info(
                "rebalanced",
                group=self.group,
                topic=topic,
                queues=len(wanted),
                added=len(added),
                removed=len(current - wanted),
            )

    def _assign(self, mq: MessageQueue, expr: str) -> None:
        pq = ProcessQueue()
        pq.locked = self.orderly and self.message_model == "CLUSTERING"
        self._pqs[mq] = pq
        self._pull_tasks[mq] = asyncio.get_running_loop().create_task(self._pull_loop(mq, pq, expr))

    async def _revoke(self, mq: MessageQueue) -> None:
        pq = self._pqs.pop(mq, None)
        task = self._pull_tasks.pop(mq, None)
        if pq is not None:
            pq.dropped = True
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await self.offset_store.persist([mq])
        self.offset_store.remove(mq)
        if self.orderly and self.message_model == "CLUSTERING":
            await self._unlock([mq])

    async def _lock(self, mqs: list[MessageQueue]) -> set[MessageQueue]:
        locked: set[MessageQueue] = set()
        by_broker: dict[str, list[MessageQueue]] = {}
        for mq in mqs:
            by_broker.setdefault(mq.broker_name, []).append(mq)
        for broker, qs in by_broker.items():
            addr = self.instance.broker_addr(broker)
            if addr is None:
                continue
            try:
                locked |= await self.instance.api.lock_batch(addr, self.group, self.instance.client_id, qs)
            except RemotingError as exc:
                _log.warning("lock failed", broker=broker, error=str(exc))
        for mq in mqs:
            pq = self._pqs.get(mq)
            if pq is not None:
                pq.locked = mq in locked
                pq.lock_time = time.monotonic()
        return locked

    async def _unlock(self, mqs: list[MessageQueue]) -> None:
        by_broker: dict[str, list[MessageQueue]] = {}
        for mq in mqs:
            by_broker.setdefault(mq.broker_name, []).append(mq)
        for broker, qs in by_broker.items():
            addr = self.instance.broker_addr(broker)
            if addr is not None:
                with contextlib.suppress(RemotingError):
                    await self.instance.api.unlock_batch(addr, self.group, self.instance.client_id, qs)

    async def reset_offsets(self, offsets: dict[MessageQueue, int]) -> None:
        """RESET_CONSUMER_CLIENT_OFFSET from the broker: restart the named queues at the given offsets."""
        for mq, off in offsets.items():
            self.offset_store.update(mq, off, force=True)
            if mq in self._pqs:
                expr = self._all_subs().get(mq.topic, "*")
                pq = self._pqs.pop(mq)
                pq.dropped = True
                task = self._pull_tasks.pop(mq, None)
                if task is not None:
                    task.cancel()
                self._start_override[mq] = off
                self._assign(mq, expr)
            else:
                self._start_override[mq] = off
        await self.offset_store.persist(list(offsets))

    # -- pulling ---------------------------------------------------------------------------------------------------

    async def _start_offset(self, mq: MessageQueue) -> int:
        if mq in self._start_override:
            return self._start_override.pop(mq)
        last = await self.offset_store.read_store(mq)
        if last is not None and last >= 0:
            return last
        retry = mq.topic.startswith(RETRY_PREFIX)
        addr = await self.instance.find_broker_addr(mq, master_only=False)
        if self.consume_from_where == "FIRST_OFFSET":
            return 0
        if self.consume_from_where == "TIMESTAMP" and not retry:
            return await self.instance.api.search_offset(addr, mq, self.consume_timestamp)
        if retry:
            return 0
        return await self.instance.api.get_max_offset(addr, mq)

    async def _pull_loop(self, mq: MessageQueue, pq: ProcessQueue, expr: str) -> None:
        try:
            offset = await self._start_offset(mq)
        except (RemotingError, Exception) as exc:
            _log.warning(
                "cannot compute the start offset; queue left for the next rebalance", mq=str(mq), error=str(exc)
            )
            self._pqs.pop(mq, None)
            self._pull_tasks.pop(mq, None)
            return
        self.offset_store.update(mq, offset)
        clustering = self.message_model == "CLUSTERING"
        while self._running and not pq.dropped:
            if len(pq) >= self.threshold_count or pq.bytes >= self.threshold_size:
                await asyncio.sleep(0.05)  # flow control: RocketMQ waits 50 ms and checks again
                continue
            if self.orderly and clustering and not pq.locked:
                await asyncio.sleep(0.5)
                continue
            commit = self.offset_store.read_memory(mq) if clustering else None
            try:
                res = await pull_once(
                    self.instance,
                    self.group,
                    mq,
                    offset,
                    self.pull_batch_size,
                    expr,
                    suspend_ms=self.suspend_ms,
                    commit_offset=commit if commit is not None else -1,
                    sub_version=self._sub_version,
                    timeout=self.suspend_ms / 1000 + 15,
                )
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                if self._running and not pq.dropped:
                    _log.warning("pull failed", mq=str(mq), error=str(exc))
                    await asyncio.sleep(1.0)
                continue
            if pq.dropped:
                return
            pq.last_pull = time.monotonic()
            offset = res.next_begin_offset
            if res.status is PullStatus.FOUND and res.msg_found_list:
                pq.put(res.msg_found_list)
                if self.orderly:
                    self._ensure_orderly_consumer(mq, pq)
                else:
                    self._dispatch_concurrently(mq, pq, res.msg_found_list)
            elif res.status is PullStatus.OFFSET_ILLEGAL:
                _log.warning("pull offset illegal, moved", mq=str(mq), next=offset)
                self.offset_store.update(mq, offset, force=True)
                await self.offset_store.persist([mq])
            elif len(pq) == 0:
                # nothing in flight: everything before `offset` was filtered or consumed
                self.offset_store.update(mq, offset)

    # -- consuming -------------------------------------------------------------------------------------------------

    def _listener_for(self, msgs: list[MessageExt]) -> Listener:
        sub = self._subs.get(msgs[0].topic)
        return (sub[1] if sub and sub[1] else None) or self._default_listener  # type: ignore[return-value]

    async def _call_listener(self, msgs: list[MessageExt]) -> ConsumeResult:
        listener = self._listener_for(msgs)
        try:
            if inspect.iscoroutinefunction(listener):
                result = await listener(msgs)
            else:
                result = await asyncio.get_running_loop().run_in_executor(None, listener, msgs)
                if inspect.isawaitable(result):
                    result = await result
        except Exception as exc:
            _log.warning("listener raised; messages will be retried", group=self.group, error=repr(exc))
            return ConsumeResult.RECONSUME_LATER
        if result is None:
            return ConsumeResult.RECONSUME_LATER
        return result if isinstance(result, ConsumeResult) else ConsumeResult(str(result))

    def _spawn(self, coro: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._consume_tasks.add(task)
        task.add_done_callback(self._consume_tasks.discard)

    def _dispatch_concurrently(self, mq: MessageQueue, pq: ProcessQueue, msgs: list[MessageExt]) -> None:
        for i in range(0, len(msgs), self.batch_max):
            self._spawn(self._consume_batch(mq, pq, msgs[i : i + self.batch_max]))

    async def _consume_batch(self, mq: MessageQueue, pq: ProcessQueue, batch: list[MessageExt]) -> None:
        async with self._sem:
            if pq.dropped:
                return
            result = await self._call_listener(batch)
        if pq.dropped:
            return
        if result is ConsumeResult.SUCCESS:
            self.consumed_ok += len(batch)
            done = batch
        else:
            self.consumed_failed += len(batch)
            done, failed = await self._send_back(mq, batch)
            if failed:
                self._spawn(self._retry_locally(mq, pq, failed))
        offset = pq.remove(done)
        if offset >= 0:
            self.offset_store.update(mq, offset)

    async def _send_back(
        self, mq: MessageQueue, msgs: list[MessageExt], delay_level: int = 0
    ) -> tuple[list[MessageExt], list[MessageExt]]:
        if self.message_model == "BROADCASTING":
            _log.warning("broadcasting consumption failed; messages are dropped", count=len(msgs))
            return msgs, []
        done: list[MessageExt] = []
        failed: list[MessageExt] = []
        for m in msgs:
            try:
                addr = await self.instance.find_broker_addr(mq)
                await self.instance.api.send_back(
                    addr, m.commit_log_offset, self.group, delay_level, m.msg_id, m.topic, self.max_reconsume_times
                )
                done.append(m)
            except Exception as exc:
                _log.warning("send back failed; consuming again locally in 5 s", error=str(exc))
                m.reconsume_times += 1
                failed.append(m)
        return done, failed

    async def _retry_locally(self, mq: MessageQueue, pq: ProcessQueue, msgs: list[MessageExt]) -> None:
        await asyncio.sleep(LOCAL_RETRY_DELAY)
        if not pq.dropped and self._running:
            await self._consume_batch(mq, pq, msgs)

    def _ensure_orderly_consumer(self, mq: MessageQueue, pq: ProcessQueue) -> None:
        if not pq.consuming:
            pq.consuming = True
            self._spawn(self._consume_orderly(mq, pq))

    async def _consume_orderly(self, mq: MessageQueue, pq: ProcessQueue) -> None:
        try:
            while not pq.dropped and self._running and len(pq):
                if self.message_model == "CLUSTERING" and not pq.locked:
                    await asyncio.sleep(0.2)
                    continue
                batch = pq.take_in_order(self.batch_max)
                async with self._sem:
                    result = await self._call_listener(batch)
                if pq.dropped:
                    return
                if result is ConsumeResult.SUCCESS:
                    self.consumed_ok += len(batch)
                    offset = pq.remove(batch)
                    self.offset_store.update(mq, offset)
                    continue
                self.consumed_failed += len(batch)
                over = [m for m in batch if m.reconsume_times >= self.max_reconsume_times]
                if over:  # poison: to the DLQ, then go on
                    done, _failed = await self._send_back(mq, over, -1)
                    offset = pq.remove(done)
                    self.offset_store.update(mq, offset)
                for m in batch:
                    m.reconsume_times += 1
                await asyncio.sleep(SUSPEND_QUEUE_DELAY)
        finally:
            pq.consuming = False

    def running_info(self) -> dict[str, Any]:
        return {
            "properties": {
                "PROP_CONSUME_TYPE": "CONSUME_PASSIVELY",
                "PROP_CONSUMEORDERLY": str(self.orderly).lower(),
                "PROP_CLIENT_VERSION": "rocketq",
                "PROP_NAMESERVER_ADDR": ";".join(self.instance.namesrv_addrs),
            },
            "subscriptionSet": self.heartbeat_data()["subscriptionDataSet"],
            "mqTable": {
                str(mq): {
                    "cachedMsgCount": len(pq),
                    "cachedMsgSizeInMiB": pq.bytes // (1 << 20),
                    "commitOffset": pq.commit_offset(),
                    "locked": pq.locked,
                }
                for mq, pq in self._pqs.items()
            },
            "statusTable": {"consumeOk": self.consumed_ok, "consumeFailed": self.consumed_failed},
        }

    @property
    def assignment(self) -> list[MessageQueue]:
        return sorted(self._pqs)
