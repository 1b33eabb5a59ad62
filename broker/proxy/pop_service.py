"""PopService: POP consumption over the broker's store for the gRPC endpoint — the timing and IO around the pure
``pop_state.PopState``: long-polling receives woken by store arrivals or by the next invisibility deadline, reads
through ``MessageStore.get_message`` (the read a pull makes: ``broker.services.consume.ConsumeRequest.read``), redelivery
of due messages, the dead-letter put to ``%DLQ%<group>`` at max attempts (at receive time, and by a revive task once
a second for groups nobody receives from), the auto-renewal of push consumers' invisibility (the same task), and persistence (``pop_store``) after every change.

The consumer offset table (``group@topic``) gets each queue's *acked* low watermark — the queue offset of its oldest
message still in flight, else the pop offset — so ``mqadmin consumerProgress`` shows a POP group's progress (and
counts in-flight messages as not yet consumed) like any other; the pop state file is authoritative for the endpoint. A 4.x consumer and a
5.x consumer of different groups share a topic freely: each group has its own offsets.

Traffic is counted in the broker's ``BrokerStats``, as pulls are: a receive that found messages (``on_get``, also
for redeliveries), one that found none (``on_miss``), acks (``on_ack``) and dead-letters (``on_dlq``), so metrics,
``statsAll`` and ``brokerStatus`` include 5.x consumers.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass

import structlog

from broker import topics as T
from broker.proxy.convert import DLQ_ORIGIN_MESSAGE_ID, DLQ_ORIGIN_TOPIC
from broker.proxy.pop_state import HandleStatus, InFlight, PopState
from broker.proxy.pop_store import PopStore
from broker.services.broker_stats import BrokerStats
from broker.services.consume import ConsumeRequest
from broker.services.consumer_offsets import ConsumerOffsetTable
from broker.services.topic_config import TopicConfigTable
from broker.store.dispatcher import Arrival
from broker.store.message_store import MessageStore
from broker.store.request import MessageFilter, PutRequest
from broker.store.results import GetMessageStatus
from protocol.message_ext import MessageExt
from protocol.message_properties import PropertyKey, encode_properties
from runtime.tasks import stop_tasks

_log = structlog.get_logger("rocketq.broker.pop")

# get_message statuses after which the pop offset moves to next_begin_offset
_ADVANCE = frozenset(
    {
        GetMessageStatus.FOUND,
        GetMessageStatus.NO_MATCHED_MESSAGE,
        GetMessageStatus.OFFSET_TOO_SMALL,
        GetMessageStatus.OFFSET_OVERFLOW_BADLY,
        GetMessageStatus.OFFSET_FOUND_NULL,
        GetMessageStatus.MESSAGE_WAS_REMOVING,
    }
)


_REVIVE_PERIOD_S = 1.0
_RENEW_AHEAD_MS = 10_000  # proxy: renew 10 s before the deadline …
_RENEW_MAX_MS = 3 * 3_600_000  # … for at most 3 h


@dataclass(slots=True)
class PopRequest:
    """One receive: ``group``'s pop of up to ``batch`` messages of ``topic`` (every queue, or ``queue_id`` ≥ 0)
    through ``message_filter``, each invisible for ``invisible_ms`` (renewed for ``renew_client`` while it is
    connected, when named), dead-lettered once it has had ``max_attempts``; waiting up to ``poll_s``."""

    group: str
    topic: str
    message_filter: MessageFilter | None
    batch: int
    invisible_ms: int
    fifo: bool
    max_attempts: int
    poll_s: float
    queue_id: int = -1
    renew_client: str = ""


@dataclass(slots=True)
class Popped:
    message: MessageExt
    entry: InFlight


class PopService:
    def __init__(
        self,
        store: MessageStore,
        topics: TopicConfigTable,
        offsets: ConsumerOffsetTable,
        config_dir: str,
        *,
        max_attempts: Callable[[str], int] = lambda _g: 17,
        default_invisible_ms: int = 60_000,
        init_by_check_in_mem: bool = True,
        in_memory_bytes: int = 8 << 30,
        clock: Callable[[], float] = time.time,
        stats: BrokerStats | None = None,
    ) -> None:
        self._stats = stats
        self._default_invisible_ms = default_invisible_ms
        self._init_by_check_in_mem = init_by_check_in_mem
        self._in_memory_bytes = in_memory_bytes
        # is this gRPC client still connected (auto-renew stops when not); set by the endpoint
        self.alive: Callable[[str], bool] = lambda _c: False
        self._max_attempts = max_attempts
        self._task: asyncio.Task[None] | None = None
        self._store = store
        self._topics = topics
        self._offsets = offsets
        self._pop = PopStore(config_dir)
        self._clock = clock
        self._waiters: dict[str, set[asyncio.Event]] = {}
        self._rr: dict[tuple[str, str], int] = {}
        self.held = 0  # receives long-polling now
        self.to_dlq = 0

    @property
    def state(self) -> PopState:
        return self._pop.state

    def load(self) -> None:
        self._pop.load()

    async def flush(self) -> None:
        await self._pop.flush()

    def now_ms(self) -> int:
        return int(self._clock() * 1000)

    # -- revive: dead-letter exhausted messages even when no consumer receives ------------------------------------

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._revive_loop(), name="pop-revive")

    async def stop(self) -> None:
        task, self._task = self._task, None
        await stop_tasks(task)
        await self.flush()

    async def _revive_loop(self) -> None:
        while True:
            await asyncio.sleep(_REVIVE_PERIOD_S)
            try:
                await self.revive_once()
            except Exception:
                _log.exception("pop revive pass failed")

    async def revive_once(self) -> int:
        """Dead-letter every due in-flight message that has had its group's max attempts; returns how many.
        (Due messages with attempts left wait for the next receive, which redelivers them.)"""
        now = self.now_ms()
        inv = self._default_invisible_ms
        if self.state.renew(now, min(_RENEW_AHEAD_MS, inv // 2), inv, _RENEW_MAX_MS, self.alive):
            self._pop.changed()
        moved = 0
        for group, topic in list(self.state.inflight):
            limit = self._max_attempts(group)
            for e in self.state.due(group, topic, now):
                if e.attempt < limit:
                    continue
                msg = self._store.look_message_by_offset(e.phys)
                if msg is None:
                    self.state.remove(e)
                else:
                    await self.forward_to_dlq(e, msg)
                moved += 1
        if moved:
            self._pop.changed()
        return moved

    # -- arrivals and waiting -------------------------------------------------------------------------------------

    def on_arrival(self, arrival: Arrival) -> None:
        for ev in self._waiters.get(arrival.topic, ()):
            ev.set()

    # -- groups -----------------------------------------------------------------------------------------------------

    def ensure_group(self, group: str, topic: str) -> None:
        """Give a group its pop offsets on ``topic``: its consumer offset if it has one, else ``_init_offset``."""
        tc = self._topics.get(topic)
        if tc is None:
            return
        changed = False
        for qid in range(tc.read_queue_nums):
            if self.state.offset(group, topic, qid) is None:
                committed = self._offsets.query(group, topic, qid)
                start = committed if committed >= 0 else self._init_offset(topic, qid)
                self.state.set_offset(group, topic, qid, start)
                self._offsets.commit(group, topic, qid, start)
                changed = True
        if changed:
            self._pop.changed()

    def _init_offset(self, topic: str, qid: int) -> int:
        """J ``PopMessageProcessor.getInitOffset`` (initMode MAX): the queue's first message when nothing was ever
        cleaned from the queue and that message is still in memory (``initPopOffsetByCheckMsgInMem``, default on;
        in memory as the pull path judges it: within ``accessMessageInMemoryMaxRatio`` of RAM from the commit log's
        end), else the queue's last message (max - 1, at least 0)."""
        store = self._store
        if self._init_by_check_in_mem and store.get_min_offset_in_queue(topic, qid) <= 0:
            phys = store.queue_unit_position(topic, qid, 0)
            if phys is not None and store.commitlog.max_offset - phys <= self._in_memory_bytes:
                return 0
        return max(store.get_max_offset_in_queue(topic, qid) - 1, 0)

    # -- receive ----------------------------------------------------------------------------------------------------

    async def receive(self, req: PopRequest) -> list[Popped]:
        """Pop up to ``req.batch`` messages (from every queue, or only ``req.queue_id`` ≥ 0), waiting up to
        ``req.poll_s`` for one to arrive or become due."""
        group, topic = req.group, req.topic
        self.ensure_group(group, topic)
        loop = asyncio.get_running_loop()
        end = loop.time() + req.poll_s
        ev = asyncio.Event()
        waiters = self._waiters.setdefault(topic, set())
        waiters.add(ev)
        self.held += 1
        try:
            while True:
                ev.clear()
                got = await self._pop_once(req)
                remaining = end - loop.time()
                if got or remaining <= 0:
                    if not got and self._stats is not None:
                        self._stats.on_miss()
                    return got
                nd = self.state.next_deadline(group, topic)
                if nd is not None:
                    remaining = min(remaining, max(0.0, nd / 1000 - self._clock()) + 0.005)
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(remaining):
                        await ev.wait()
        finally:
            self.held -= 1
            waiters.discard(ev)
            if not waiters:
                self._waiters.pop(topic, None)

    async def _pop_once(self, req: PopRequest) -> list[Popped]:
        group, topic, batch, queue_id = req.group, req.topic, req.batch, req.queue_id
        invisible_ms, renew_client = req.invisible_ms, req.renew_client
        st = self.state
        now = self.now_ms()
        out: list[Popped] = []
        changed = False
        for e in st.due(group, topic, now):
            if queue_id >= 0 and e.queue_id != queue_id:
                continue
            if len(out) >= batch:
                break
            changed = True
            msg = self._store.look_message_by_offset(e.phys)
            if msg is None:  # removed by retention
                st.remove(e)
                continue
            if e.attempt >= req.max_attempts:
                await self.forward_to_dlq(e, msg)
                continue
            st.redeliver(e, now, invisible_ms, renew_client)
            out.append(Popped(msg, e))
        stats = self._stats
        if out and stats is not None:
            stats.on_get(group, topic, out[0].entry.queue_id, len(out), sum(p.message.store_size for p in out), None)
        tc = self._topics.get(topic)
        n = tc.read_queue_nums if tc is not None else 0
        locked = st.locked_queues(group, topic) if req.fifo else set()
        start = self._rr.get((group, topic), 0)
        self._rr[(group, topic)] = start + 1
        for i in range(n):
            if len(out) >= batch:
                break
            qid = (start + i) % n
            if qid in locked or (queue_id >= 0 and qid != queue_id):
                continue
            off = st.offset(group, topic, qid)
            if off is None:
                continue
            res = await self._store.get_message(
                ConsumeRequest(group, topic, qid, True, off, batch - len(out)).read(None, req.message_filter)
            )
            if res.status is GetMessageStatus.FOUND:
                found = len(out)
                for m in res.messages():
                    e = st.add(
                        group,
                        topic,
                        qid,
                        m.queue_offset,
                        m.commit_log_offset,
                        m.store_size,
                        m.msg_id,
                        now_ms=now,
                        invisible_ms=invisible_ms,
                        fifo=req.fifo,
                        renew_client=renew_client,
                    )
                    out.append(Popped(m, e))
                if stats is not None:
                    new = out[found:]
                    nbytes = sum(p.message.store_size for p in new)
                    stats.on_get(group, topic, qid, len(new), nbytes, res.next_begin_offset)
            if res.status in _ADVANCE and res.next_begin_offset != off:
                st.set_offset(group, topic, qid, res.next_begin_offset)
                self._commit(group, topic, qid)
                changed = True
        if changed or out:
            self._pop.changed()
        return out

    # -- ack / change / DLQ ----------------------------------------------------------------------------------------

    def _commit(self, group: str, topic: str, queue_id: int) -> None:
        """The consumer offset of a POP queue: its oldest in-flight message, else the pop offset."""
        table = self.state.inflight.get((group, topic), {})
        low = min((e.queue_offset for e in table.values() if e.queue_id == queue_id), default=None)
        if low is None:
            low = self.state.offset(group, topic, queue_id)
        if low is not None:
            self._offsets.commit(group, topic, queue_id, low)

    def ack(self, group: str, topic: str, handle: str) -> HandleStatus:
        status, e = self.state.ack(group, topic, handle, self.now_ms())
        if status is HandleStatus.OK and e is not None:
            if self._stats is not None:
                self._stats.on_ack(group, topic, 1)
            self._commit(group, topic, e.queue_id)
            self._pop.changed()
            self.wake_all_for(topic)
        return status

    def change_invisible(
        self, group: str, topic: str, handle: str, invisible_ms: int
    ) -> tuple[HandleStatus, InFlight | None]:
        status, e = self.state.change_invisible(group, topic, handle, self.now_ms(), invisible_ms)
        if status is HandleStatus.OK:
            self._pop.changed()
            self.wake_all_for(topic)
        return status, e

    def wake_all_for(self, topic: str) -> None:
        for ev in self._waiters.get(topic, ()):
            ev.set()

    async def forward_handle_to_dlq(self, group: str, topic: str, handle: str) -> HandleStatus:
        status, e = self.state.find(group, topic, handle, self.now_ms())
        if status is not HandleStatus.OK or e is None:
            return status
        msg = self._store.look_message_by_offset(e.phys)
        if msg is None:
            self.state.remove(e)
            self._pop.changed()
            return HandleStatus.OK
        await self.forward_to_dlq(e, msg)
        self._pop.changed()
        self.wake_all_for(topic)
        return HandleStatus.OK

    async def forward_to_dlq(self, e: InFlight, msg: MessageExt) -> None:
        """Put ``msg`` to ``%DLQ%<group>`` (1 queue, created on demand as send-back does) and drop it from flight."""
        dlq = T.dlq_topic(e.group)
        self._topics.create_if_absent(dlq, 1, T.PERM_RW)
        props = dict(msg.properties)
        props.setdefault(PropertyKey.RETRY_TOPIC, msg.topic)
        props[DLQ_ORIGIN_TOPIC] = msg.topic
        props[DLQ_ORIGIN_MESSAGE_ID] = e.message_id
        props.setdefault(PropertyKey.UNIQ_KEY, e.message_id)
        result = await self._store.put_message(
            PutRequest.from_ext(
                msg, topic=dlq, queue_id=0, properties=encode_properties(props), reconsume_times=e.attempt
            )
        )
        if not result.ok:
            _log.warning("dead-letter put failed; kept in flight", group=e.group, status=result.status.name)
            return
        self.state.remove(e)
        self._commit(e.group, e.topic, e.queue_id)
        self.to_dlq += 1
        if self._stats is not None:
            self._stats.on_dlq(e.group, e.topic)
        _log.info("message dead-lettered", group=e.group, topic=e.topic, message_id=e.message_id, attempts=e.attempt)
