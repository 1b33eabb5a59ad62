"""PushConsumer: subscribe with a listener; the consumer shares the group's queues with the other members
(``rebalance.py``), long-polls each of its queues and hands the messages to the listener (``consume.py``),
committing offsets as messages are consumed (``offset_store.py``).

Per owned queue there is a ``ProcessQueue`` and one pull task. A pull asks for ``pull_batch_size`` messages and
lets the broker hold it up to ``suspend_timeout_ms`` (15 s) when there are none (PULL sysFlag SUSPEND |
SUBSCRIPTION, plus COMMIT_OFFSET with the consumed offset in clustering mode). Flow control: the pull task waits
while its queue caches ``pull_threshold_for_queue`` messages or ``pull_threshold_size_for_queue`` MiB, or (concurrent
mode) while the offsets in flight span more than ``consume_concurrently_max_span``; consumption wakes it.

Clustering consumers subscribe ``%RETRY%<group>`` too, so messages sent back by a failed listener come back (with
their original topic restored from RETRY_TOPIC); offsets live on the brokers. Broadcasting consumers get every
queue and keep offsets in a local file. Where a queue with no committed offset starts: ``consume_from_where``
(LAST_OFFSET: the end — retry topics from 0; FIRST_OFFSET: 0, which the broker corrects to its min offset, as in J's
``computePullFromWhere``; TIMESTAMP: ``consume_timestamp``).

The broker's requests are answered through the client instance: NOTIFY_CONSUMER_IDS_CHANGED (rebalance at once),
RESET_CONSUMER_CLIENT_OFFSET (restart the queues at the given offsets), GET_CONSUMER_RUNNING_INFO and
CONSUME_MESSAGE_DIRECTLY (the listener once on a given message, ``direct.py``).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Iterable
from typing import Unpack

from client._aio import StartClose, log_stop_failure
from client._log import get_logger
from client.config import PushConsumerConfig, split_options
from client.consumer.allocate import allocate_averagely
from client.consumer.consume import ConcurrentConsumeService, OrderlyConsumeService
from client.consumer.direct import consume_directly
from client.consumer.listener import Listener as Listener
from client.consumer.listener import ListenerRunner
from client.consumer.offset_store import LocalFileOffsetStore, OffsetStore, RemoteBrokerOffsetStore
from client.consumer.options import PushConsumerOptions
from client.consumer.process_queue import ProcessQueue
from client.consumer.pulling import RETRY_PREFIX, pull_once, restore_retry_topic, start_offset
from client.consumer.queue_locks import lock_queues, unlock_queues
from client.consumer.rebalance import Rebalancer
from client.consumer.running_info import CONSUME_FROM_WHERE, encode_running_info
from client.consumer.selector import ALL, MessageSelector, as_selector
from client.errors import MQClientError
from client.instance import ClientInstance
from client.message import MessageQueue, validate_group, validate_topic
from client.producer.producer import Producer
from client.results import ConsumeResult, PullStatus
from client.trace import INNER_TRACE_GROUP_PREFIX, TraceDispatcher, TracedListener
from protocol.bodies import (
    ConsumeFromWhere,
    ConsumeMessageDirectlyResult,
    ConsumerData,
    ConsumeType,
    MessageModel,
)
from protocol.errors import RemotingError
from protocol.message_ext import MessageExt
from protocol.namespace import wrap
from protocol.trace import DEFAULT_TRACE_TOPIC as TRACE_TOPIC
from runtime.tasks import stop_tasks

_log = get_logger("rocketq.client.push")


PULL_DELAY_ON_ERROR = 1.0  # J waits 3 s; a restarted broker is picked up sooner this way
PULL_DELAY_NOT_LOCKED = 1.0
FLOW_CONTROL_RECHECK = 1.0  # safety net: the consume side wakes the pull task, this only bounds a missed wake-up
INNER_PRODUCER_GROUP = "CLIENT_INNER_PRODUCER"


class PushConsumer(StartClose):
    """``consumer.subscribe("Topic", "TagA || TagB", listener)`` then ``async with consumer: ...``.

    Options are the fields of ``ClientConfig`` and ``PushConsumerConfig`` (``message_model``, ``orderly``,
    ``consume_from_where``, ``pull_threshold_for_queue``…). ``instance`` shares another client's connections.
    """

    def __init__(
        self,
        group: str,
        namesrv_addr: str | None = None,
        *,
        instance: ClientInstance | None = None,
        **options: Unpack[PushConsumerOptions],
    ) -> None:
        validate_group(group)
        client_cfg, self.config = split_options({"namesrv_addr": namesrv_addr, **options}, PushConsumerConfig)
        self.namespace = self.config.namespace
        self.group = group = wrap(self.namespace, group)
        self.broadcasting = self.config.message_model == "BROADCASTING"
        self.instance = instance or ClientInstance(
            config=client_cfg, default_instance_name="DEFAULT" if self.broadcasting else None
        )
        cfg = self.config
        self.consume_timestamp = cfg.consume_timestamp or int((time.time() - 1800) * 1000)
        self._subs: dict[str, tuple[MessageSelector, Listener | None]] = {}
        self._default_listener: Listener | None = None
        self._sub_version = int(time.time() * 1000)
        self.offset_store: OffsetStore = (
            LocalFileOffsetStore(cfg.offset_store_dir, self.instance.client_id, group)
            if self.broadcasting
            else RemoteBrokerOffsetStore(self.instance.api, group, self._master_addr, self.instance.request_timeout)
        )
        self._pqs: dict[MessageQueue, ProcessQueue] = {}
        self._pull_tasks: dict[MessageQueue, asyncio.Task[None]] = {}
        self._resume: dict[MessageQueue, asyncio.Event] = {}
        self._paused: set[MessageQueue] = set()
        self._rebalancer = Rebalancer(
            self.instance,
            group,
            broadcasting=self.broadcasting,
            strategy=cfg.allocate_strategy or allocate_averagely,
            interval=cfg.rebalance_interval,
            topics=lambda: sorted(self._all_subs()),
            target=self,
        )
        self._service: ConcurrentConsumeService | OrderlyConsumeService | None = None
        self._inner_producer: Producer | None = None
        self._listeners = ListenerRunner(
            group, self.namespace, self._subs, lambda: self._default_listener, cfg.consume_thread_max
        )
        self._tasks: list[asyncio.Task[None]] = []
        self._running = False
        self._started_at = 0
        self.flow_control_times = 0
        self.pulled = 0
        self._started_mono = 0.0
        # per topic, pulls that found messages: [messages, milliseconds, pulls] (J's pullTPS / pullRT)
        self._pull_stats: dict[str, list[float]] = {}
        self._trace = (
            TracedListener(
                self._listeners.invoke, TraceDispatcher(self._trace_sender, cfg.trace_topic or TRACE_TOPIC), group
            )
            if cfg.enable_trace
            else None
        )

    # -- configuration ---------------------------------------------------------------------------------------------

    def subscribe(self, topic: str, expression: str | MessageSelector = "*", listener: Listener | None = None) -> None:
        """Subscribe ``topic`` filtered by tags (``"TagA || TagB"`` or ``"*"``) or by a selector
        (``MessageSelector.by_sql("a > 5")``). ``listener(msgs)`` gets the batches: an ``async def`` runs on the loop,
        a plain function in a worker thread. It returns a ``ConsumeResult``."""
        validate_topic(topic)
        if topic.startswith(RETRY_PREFIX):
            raise ValueError("retry topics are subscribed automatically")
        topic = wrap(self.namespace, topic)
        self._subs[topic] = (as_selector(expression), listener)
        if listener is not None and self._default_listener is None:
            self._default_listener = listener
        self._sub_version = int(time.time() * 1000)
        if self._running:
            self.instance.spawn(self._after_subscription_change(), name=f"subscribe-{self.group}")

    def unsubscribe(self, topic: str) -> None:
        self._subs.pop(wrap(self.namespace, topic), None)
        self._sub_version = int(time.time() * 1000)
        if self._running:
            self.instance.spawn(self._after_subscription_change(), name=f"unsubscribe-{self.group}")

    async def _after_subscription_change(self) -> None:
        await self.instance.refresh_routes()
        await self.instance.send_heartbeat_to_all()
        self._rebalancer.trigger()

    def register_listener(self, listener: Listener) -> None:
        """The listener for topics subscribed without one."""
        self._default_listener = listener

    @property
    def retry_topic(self) -> str:
        return RETRY_PREFIX + self.group

    def _all_subs(self) -> dict[str, MessageSelector]:
        subs = {t: e for t, (e, _l) in self._subs.items()}
        if not self.broadcasting:
            subs[self.retry_topic] = ALL
        return subs

    def _expression(self, topic: str) -> MessageSelector | None:
        """``_all_subs().get(topic)`` without building the dict (the pull loop asks once per pull)."""
        if not self.broadcasting and topic.startswith(RETRY_PREFIX) and topic == self.retry_topic:
            return ALL
        sub = self._subs.get(topic)
        return sub[0] if sub is not None else None

    def topics(self) -> set[str]:
        return set(self._all_subs())

    def heartbeat_data(self) -> ConsumerData:
        return ConsumerData(
            group_name=self.group,
            consume_type=ConsumeType.CONSUME_PASSIVELY,
            message_model=MessageModel(self.config.message_model),
            consume_from_where=ConsumeFromWhere(CONSUME_FROM_WHERE[self.config.consume_from_where]),
            subscription_data_set=[
                sel.subscription(topic, self._sub_version) for topic, sel in sorted(self._all_subs().items())
            ],
        )

    # -- lifecycle -------------------------------------------------------------------------------------------------

    async def start(self) -> None:
        if self._running:
            return
        if not self._subs:
            raise MQClientError("subscribe to at least one topic before start()")
        if self._default_listener is None:
            raise MQClientError("no listener: pass one to subscribe() or register_listener()")
        self.instance.register_consumer(self)
        self._running = True
        self._started_at = int(time.time() * 1000)
        self._started_mono = time.monotonic()
        await self.instance.start()
        try:
            await self.offset_store.load()
            await self.instance.refresh_routes()
            await self._check_selectors()
            await self.instance.send_heartbeat_to_all()
            service: ConcurrentConsumeService | OrderlyConsumeService
            if self.config.orderly:
                service = OrderlyConsumeService(self, self.config, clustering=not self.broadcasting)
            else:
                service = ConcurrentConsumeService(self, self.config, broadcasting=self.broadcasting)
            self._service = service
            service.start()
            loop = asyncio.get_running_loop()
            self._tasks = [loop.create_task(self._persist_loop(), name=f"persist-offsets-{self.group}")]
            await self._rebalancer.run_once()
            self._rebalancer.start()
        except BaseException:
            await self.close()
            raise
        _log.info(
            "push consumer started", group=self.group, client_id=self.instance.client_id, topics=sorted(self._subs)
        )

    async def _check_selectors(self) -> None:
        """J ``checkClientInBroker``: each SQL92 subscription is compiled by a broker of its topic before the
        consumer starts, so a bad expression (or a broker without ``enablePropertyFilter``) fails ``start()``."""
        for topic, (sel, _listener) in self._subs.items():
            if not sel.is_sql:
                continue
            route = await self.instance.require_route(topic)
            addr = next((a for bd in route.brokers.values() for a in bd.broker_addrs.values()), None)
            if addr is None:
                continue
            try:
                await self.instance.api.check_client_config(
                    addr, self.group, self.instance.client_id, sel.subscription(topic, self._sub_version)
                )
            except RemotingError as exc:
                raise MQClientError(f"the broker refused the subscription to {topic}: {exc}") from exc

    async def close(self) -> None:
        """Stop pulling, let listener calls in flight finish (``drain_timeout``), persist offsets, release orderly
        locks, unregister from the brokers and close the instance."""
        if not self._running:
            return
        self._running = False
        await self._rebalancer.stop()
        await stop_tasks(*self._tasks, *self._pull_tasks.values(), on_error=log_stop_failure)
        self._tasks = []
        self._pull_tasks.clear()
        if self._service is not None:
            await self._service.close(self.config.drain_timeout)
        await self.offset_store.persist(list(self._pqs))
        if self.config.orderly and not self.broadcasting:
            await self._unlock(list(self._pqs))
        for pq in self._pqs.values():
            pq.dropped = True
        self._pqs.clear()
        self._resume.clear()
        self._rebalancer.owned.clear()
        if self._inner_producer is not None:
            await self._inner_producer.close()
            self._inner_producer = None
        if self._trace is not None:
            await self._trace.dispatcher.close()
        self._listeners.close()  # calls still running finish on their own
        await self.instance.unregister_from_brokers(None, self.group)
        self.instance.unregister_consumer(self)
        await self.instance.close()
        _log.info("push consumer closed", group=self.group, client_id=self.instance.client_id)

    async def persist_offsets(self) -> None:
        """Persist the consumed offsets of every owned queue now (otherwise every 5 s, on revoke and at close)."""
        await self.offset_store.persist(list(self._pqs))

    async def _persist_loop(self) -> None:
        """Persist offsets every ``persist_consumer_offset_interval_ms``, the first time 10 s after start (J)."""
        interval = self.config.persist_consumer_offset_interval_ms / 1000
        await asyncio.sleep(max(interval, min(10.0, 2 * interval)))
        while True:
            try:
                await self.offset_store.persist(list(self._pqs))
            except Exception as exc:
                _log.warning("offset persist failed", group=self.group, error=str(exc))
            await asyncio.sleep(interval)

    # -- rebalance (RebalanceTarget) -------------------------------------------------------------------------------

    def rebalance_soon(self) -> None:
        self._rebalancer.trigger()

    async def rebalance(self) -> None:
        """One rebalance round now."""
        await self._rebalancer.run_once()

    async def on_assigned(self, mqs: list[MessageQueue]) -> list[MessageQueue]:
        if not self._running:
            return []
        if self.config.orderly and not self.broadcasting:
            locked = await self.lock(mqs)
            mqs = [mq for mq in mqs if mq in locked]
        starts = await asyncio.gather(*(self._start_offset(mq) for mq in mqs), return_exceptions=True)
        taken = []
        for mq, start in zip(mqs, starts, strict=True):
            if isinstance(start, BaseException):
                _log.warning(
                    "cannot compute the start offset; queue left for the next round", mq=str(mq), error=str(start)
                )
                continue
            self._begin(mq, start)
            taken.append(mq)
        return taken

    def _begin(self, mq: MessageQueue, offset: int) -> None:
        pq = ProcessQueue()
        pq.locked = self.config.orderly and not self.broadcasting
        pq.lock_time = time.monotonic()
        self._pqs[mq] = pq
        self._resume[mq] = asyncio.Event()
        self.offset_store.update(mq, offset)
        self._pull_tasks[mq] = asyncio.get_running_loop().create_task(
            self._pull_loop(mq, pq, offset), name=f"pull-{mq.topic}-{mq.broker_name}-{mq.queue_id}"
        )

    async def _stop_queue(self, mq: MessageQueue) -> ProcessQueue | None:
        pq = self._pqs.pop(mq, None)
        task = self._pull_tasks.pop(mq, None)
        self._resume.pop(mq, None)
        self._paused.discard(mq)
        if pq is not None:
            pq.dropped = True
        await stop_tasks(task, on_error=log_stop_failure)
        return pq

    async def on_revoked(self, mqs: list[MessageQueue]) -> None:
        for mq in mqs:
            await self._stop_queue(mq)
        if isinstance(self._service, OrderlyConsumeService):
            for mq in mqs:
                await self._service.wait_idle(mq, self.config.drain_timeout)
        await self.offset_store.persist(mqs)
        for mq in mqs:
            self.offset_store.remove(mq)
        if self.config.orderly and not self.broadcasting:
            await self._unlock(mqs)

    async def reset_offsets(self, topic: str, offsets: dict[MessageQueue, int]) -> None:
        """RESET_CONSUMER_CLIENT_OFFSET: the queues we own restart at the given offsets, which are persisted."""
        for mq, off in offsets.items():
            self.offset_store.update(mq, off, force=True)
            if mq in self._pqs:
                await self._stop_queue(mq)
                self.offset_store.update(mq, off, force=True)
                self._begin(mq, off)
        await self.offset_store.persist(list(offsets))

    # -- locks (orderly) -------------------------------------------------------------------------------------------

    async def lock(self, mqs: list[MessageQueue]) -> set[MessageQueue]:
        return await lock_queues(self.instance, self.group, mqs)

    async def _unlock(self, mqs: list[MessageQueue]) -> None:
        await unlock_queues(self.instance, self.group, mqs)

    # -- pulling ---------------------------------------------------------------------------------------------------

    async def _master_addr(self, mq: MessageQueue) -> str:
        """Offsets go to the master, else to a slave (J ``findBrokerAddressInSubscribe(name, 0, true)`` then
        ``(name, 0, false)``): with the master down, commits and queries reach a slave."""
        return await self.instance.find_broker_addr(mq, master_only=False)

    async def _start_offset(self, mq: MessageQueue) -> int:
        return await start_offset(
            self.instance, self.offset_store, mq, self.config.consume_from_where, self.consume_timestamp
        )

    def _pause_reason(self, pq: ProcessQueue) -> str | None:
        span = None if self.config.orderly else self.config.consume_concurrently_max_span
        return pq.must_pause(self.config.pull_threshold_for_queue, self.config.threshold_bytes, span)

    async def _wait_resume(self, mq: MessageQueue, pq: ProcessQueue, reason: str) -> None:
        self.flow_control_times += 1
        if self.flow_control_times % 1000 == 1:
            _log.warning(
                "flow control: pulling paused",
                mq=str(mq),
                reason=reason,
                cached=len(pq),
                cached_mib=pq.bytes >> 20,
                times=self.flow_control_times,
            )
        ev = self._resume.get(mq)
        if ev is None:
            return
        ev.clear()
        self._paused.add(mq)
        try:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(FLOW_CONTROL_RECHECK):
                    await ev.wait()
        finally:
            self._paused.discard(mq)

    async def _pull_loop(self, mq: MessageQueue, pq: ProcessQueue, offset: int) -> None:
        cfg = self.config
        clustering = not self.broadcasting
        while self._running and not pq.dropped:
            reason = self._pause_reason(pq)
            if reason is not None:
                await self._wait_resume(mq, pq, reason)
                continue
            if cfg.orderly and clustering and not pq.locked:
                await asyncio.sleep(PULL_DELAY_NOT_LOCKED)
                continue
            expr = self._expression(mq.topic)
            if expr is None:  # unsubscribed; the next rebalance revokes the queue
                await asyncio.sleep(PULL_DELAY_NOT_LOCKED)
                continue
            commit = self.offset_store.read_memory(mq) if clustering else None
            began = time.monotonic()
            try:
                res = await pull_once(
                    self.instance,
                    self.group,
                    mq,
                    offset,
                    cfg.pull_batch_size,
                    expr,
                    suspend_ms=cfg.suspend_timeout_ms,
                    commit_offset=commit if commit is not None and commit > 0 else -1,
                    sub_version=self._sub_version,
                    timeout=cfg.pull_timeout_ms / 1000,
                )
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                if self._running and not pq.dropped:
                    _log.warning("pull failed", mq=str(mq), offset=offset, error=str(exc))
                    await asyncio.sleep(PULL_DELAY_ON_ERROR)
                continue
            if pq.dropped:
                return
            pq.last_pull = time.monotonic()
            if res.status is PullStatus.OFFSET_ILLEGAL:
                _log.warning("pull offset illegal; moving on", mq=str(mq), offset=offset, next=res.next_begin_offset)
                offset = res.next_begin_offset
                self.offset_store.update(mq, offset, force=True)
                await self.offset_store.persist([mq])
                continue
            offset = res.next_begin_offset
            msgs = res.msg_found_list
            if msgs:
                pq.put(msgs)
                assert self._service is not None
                self._service.submit(mq, pq, msgs)
                rt_ms = (pq.last_pull - began) * 1000
                if len(msgs) < cfg.pull_batch_size:
                    # the queue is drained (a short batch): the next pull would only be held, so the listener goes
                    # first — the consume task was woken by submit and runs in the next pass, before this task
                    # resumes (the pull statistics below wait for that too: nothing but put and submit before it)
                    await asyncio.sleep(0)
                self.pulled += len(msgs)
                ps = self._pull_stats.get(mq.topic)
                if ps is None:
                    ps = self._pull_stats[mq.topic] = [0, 0.0, 0]
                ps[0] += len(msgs)
                ps[1] += rt_ms
                ps[2] += 1
            elif len(pq) == 0:
                # nothing in flight and nothing (matching) found: everything before `offset` is done
                self.offset_store.update(mq, offset)
            if cfg.pull_interval_ms:
                await asyncio.sleep(cfg.pull_interval_ms / 1000)

    # -- consuming (ConsumeHooks) ----------------------------------------------------------------------------------

    def process_queues(self) -> Iterable[tuple[MessageQueue, ProcessQueue]]:
        return list(self._pqs.items())

    def on_consumed(self, mq: MessageQueue, pq: ProcessQueue) -> None:
        ev = self._resume.get(mq)
        if ev is not None and not ev.is_set() and self._pause_reason(pq) is None:
            ev.set()

    def invoke_listener(self, msgs: list[MessageExt]) -> Awaitable[ConsumeResult]:
        """The listener's verdict on ``msgs`` (SubBefore / SubAfter trace records around it with ``enable_trace``), to
        await: the runner's own coroutine, no frame of this method's between."""
        return self._listeners.invoke(msgs) if self._trace is None else self._trace(msgs)

    async def consume_message_directly(self, msg: MessageExt) -> ConsumeMessageDirectlyResult:
        """CONSUME_MESSAGE_DIRECTLY: the listener once on ``msg`` (its original topic restored if it came through
        ``%RETRY%<group>``), outside the process queues: no offset moves and a failure is not sent back."""
        restore_retry_topic(msg, self.group)
        return await consume_directly(self._listeners.call, msg, orderly=self.config.orderly)

    async def send_back(self, mq: MessageQueue, msg: MessageExt, delay_level: int) -> bool:
        """CONSUMER_SEND_MSG_BACK; if that fails, the message itself to ``%RETRY%<group>`` (J's fallback)."""
        max_times = self.config.effective_max_reconsume_times
        try:
            addr = await self.instance.find_broker_addr(mq)
            await self.instance.api.send_back(
                addr,
                msg.commit_log_offset,
                self.group,
                delay_level,
                msg.msg_id,
                msg.topic,
                max_times,
                self.instance.request_timeout,
            )
            return True
        except Exception as exc:
            _log.info("send back failed; re-sending to the retry topic", mq=str(mq), error=str(exc))
        try:
            producer = await self._retry_producer()
            await producer.send_for_retry(self.retry_topic, msg, max_times)
            return True
        except Exception as exc:
            _log.warning("re-send to the retry topic failed", mq=str(mq), error=str(exc))
            return False

    async def _trace_sender(self) -> Producer:
        p = Producer(f"{INNER_TRACE_GROUP_PREFIX}-{self.group}-CONSUME", instance=self.instance)
        await p.start(register=False)
        return p

    async def _retry_producer(self) -> Producer:
        if self._inner_producer is None:
            p = Producer(INNER_PRODUCER_GROUP, instance=self.instance)
            await p.start(register=False)
            self._inner_producer = p
        return self._inner_producer

    def consumer_status(self, topic: str) -> dict[MessageQueue, int]:
        return {mq: off for mq, off in self.offset_store.snapshot().items() if mq.topic == topic}

    # -- introspection ---------------------------------------------------------------------------------------------

    @property
    def assignment(self) -> list[MessageQueue]:
        return sorted(self._pqs)

    def paused_queues(self) -> set[MessageQueue]:
        """Queues whose pull task is waiting for consumption to catch up (flow control)."""
        return set(self._paused)

    def process_queue(self, mq: MessageQueue) -> ProcessQueue | None:
        return self._pqs.get(mq)

    @property
    def stats(self) -> dict[str, int]:
        s = self._service.stats if self._service is not None else None
        return {
            "pulled": self.pulled,
            "consumed_ok": s.ok if s else 0,
            "consumed_failed": s.failed if s else 0,
            "sent_back": s.sent_back if s else 0,
            "local_retries": s.local_retries if s else 0,
            "expired": s.expired if s else 0,
            "flow_control_times": self.flow_control_times,
        }

    def running_info(self, jstack: bool = False) -> bytes:
        """GET_CONSUMER_RUNNING_INFO in J's ``ConsumerRunningInfo`` shape (``running_info.py``)."""
        mono = time.monotonic()
        return encode_running_info(
            self.config,
            namesrv_addrs=self.instance.namesrv_addrs,
            started_at=self._started_at,
            uptime_secs=max(mono - self._started_mono, 1e-3) if self._started_mono else 1.0,
            subscriptions=self.heartbeat_data(),
            topics=self._all_subs(),
            consumed=self._service.stats.topics if self._service is not None else {},
            pull_stats=self._pull_stats,
            queues=self._pqs,
            jstack=jstack,
        )
