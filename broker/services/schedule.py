"""ScheduleService: delayed messages (J ``ScheduleMessageService``).

A message sent with property DELAY = level > 0 is stored, instead of to its topic, to ``SCHEDULE_TOPIC_XXXX`` queue
``level - 1`` with properties REAL_TOPIC / REAL_QID naming where it belongs (``divert``; a level above the table's
last is clamped to it, as J does). One task per level reads its queue in order; a message is due at its store
timestamp + the level's delay (``messageDelayLevel``, e.g. "1s 5s 10s … 2h"). Because a level has one delay, its
queue is in due order, so the task only ever waits for the head: a timer until the head is due, or an event set by
the store's arrival listener when the queue is empty — no busy polling. A due message is re-put to REAL_TOPIC /
REAL_QID with DELAY removed (REAL_TOPIC/REAL_QID are kept, as J keeps them), the original born timestamp, flag,
sysFlag, body and reconsume count.

Progress per level is persisted every ``flushDelayOffsetInterval`` and at stop to
``<storePathRootDir>/config/delayOffset.json`` (J format, level → next queue offset to deliver)::

    {"offsetTable": {"1": 5, "2": 0}}

``divert`` is also the one entry point of RocketMQ 5's timer messages for both front ends: a message with
TIMER_DELAY_SEC / TIMER_DELAY_MS / TIMER_DELIVER_MS and no delay level goes to ``TimerService.divert``; with a delay
level the timer properties are dropped and the level applies (J ``HookUtils.checkIfTimerMessage``).

A crash between a delivery and the next persist re-delivers those messages after restart (at-least-once).
"""

from __future__ import annotations

import asyncio
import contextlib
import time

import structlog

from broker import topics as T
from broker.persistence import JsonFile, TableWriter, dumps
from broker.services.timer import TIMER_TOPIC, TimerService, has_timer, strip_timer
from broker.store.dispatcher import Arrival
from broker.store.message_store import MessageStore
from broker.store.request import GetRequest, PutRequest
from broker.store.results import PutMessageStatus
from protocol.message_ext import MessageExt
from protocol.message_properties import PropertyKey, decode_properties, encode_properties
from runtime.tasks import stop_tasks

_log = structlog.get_logger("rocketq.broker.schedule")

SCHEDULE_GROUP = "SCHEDULE_CONSUMER"
_BATCH = 32
_RETRY_AFTER_S = 1.0


def divert(
    topic: str, queue_id: int, properties: str, max_level: int, timer: TimerService | None = None
) -> tuple[str, int, str]:
    """Where a send with these properties is stored: unchanged, the schedule queue of its delay level, or (with
    ``timer``) the timer topic. Raises ``TimerRejected`` for a timer message the broker refuses."""
    props = decode_properties(properties)
    raw = props.get(PropertyKey.DELAY, "")
    try:
        level = int(raw) if raw else 0
    except ValueError:
        level = 0
    if level <= 0:
        if timer is not None and topic != TIMER_TOPIC and has_timer(props):
            new_topic, new_qid = timer.divert(topic, queue_id, props)
            if new_topic != topic:
                return new_topic, new_qid, encode_properties(props)
        return topic, queue_id, properties
    strip_timer(props)
    level = min(level, max_level)
    props[PropertyKey.DELAY] = str(level)
    props[PropertyKey.REAL_TOPIC] = topic
    props[PropertyKey.REAL_QID] = str(queue_id)
    return T.SCHEDULE_TOPIC, level - 1, encode_properties(props)


class ScheduleService:
    def __init__(
        self,
        store: MessageStore,
        config_dir: str,
        levels_ms: tuple[int, ...],
        flush_interval_ms: int,
        timer: TimerService | None = None,
    ) -> None:
        self.timer = timer
        self._store = store
        self._levels = levels_ms
        self._offsets: dict[int, int] = {}
        self._file = JsonFile(f"{config_dir}/delayOffset.json")
        self._writer = TableWriter(self._file, self.encode)
        self._flush_s = flush_interval_ms / 1000
        self._wake: dict[int, asyncio.Event] = {}
        self._tasks: list[asyncio.Task[None]] = []
        self.delivered = 0

    @property
    def max_level(self) -> int:
        return len(self._levels)

    def divert(self, topic: str, queue_id: int, properties: str) -> tuple[str, int, str]:
        return divert(topic, queue_id, properties, self.max_level, self.timer)

    # -- persistence -------------------------------------------------------------------------------------------

    def load(self) -> None:
        doc = self._file.load()
        table = doc.get("offsetTable") if isinstance(doc, dict) else None
        if isinstance(table, dict):
            for level, offset in table.items():
                with contextlib.suppress(TypeError, ValueError):
                    self._offsets[int(level)] = int(offset)

    def encode(self, *, pretty: bool = True) -> bytes:
        """The file format above; ``pretty=False`` gives the compact form GET_ALL_DELAY_OFFSET sends (J
        ``ScheduleMessageService.encode()``)."""
        return dumps({"offsetTable": {str(k): v for k, v in sorted(self._offsets.items())}}, pretty=pretty)

    async def flush(self) -> None:
        await self._writer.flush()

    def replace_offsets(self, offsets: dict[int, int]) -> None:
        """SlaveSynchronize: the master's delay-level offsets replace ours; persisted."""
        self._offsets = dict(offsets)
        self._writer.mark_dirty()

    def merge_max(self, offsets: dict[int, int]) -> None:
        """A master taking back a slave's copy: per level, the larger offset."""
        for level, off in offsets.items():
            if off > self._offsets.get(level, 0):
                self._offsets[level] = off
        self._writer.mark_dirty()

    def offset(self, level: int) -> int:
        return self._offsets.get(level, 0)

    # -- lifecycle ---------------------------------------------------------------------------------------------

    def start(self) -> None:
        loop = asyncio.get_running_loop()
        for level in range(1, self.max_level + 1):
            self._wake[level] = asyncio.Event()
            self._tasks.append(loop.create_task(self._deliver_loop(level), name=f"schedule-level-{level}"))
        self._tasks.append(loop.create_task(self._persist_loop(), name="schedule-persist"))

    async def stop(self) -> None:
        tasks, self._tasks = self._tasks, []
        await stop_tasks(*tasks)
        await self._writer.flush()

    def on_arrival(self, arrival: Arrival) -> None:
        """Store arrival listener: wake the level whose schedule queue got a message."""
        if arrival.topic == T.SCHEDULE_TOPIC:
            ev = self._wake.get(arrival.queue_id + 1)
            if ev is not None:
                ev.set()

    async def _persist_loop(self) -> None:
        while True:
            await asyncio.sleep(self._flush_s)
            await self._writer.flush()

    # -- delivery ----------------------------------------------------------------------------------------------

    async def _deliver_loop(self, level: int) -> None:
        delay_ms = self._levels[level - 1]
        wake = self._wake[level]
        while True:
            wake.clear()
            if self._store.puts_refused is not None:  # a slave (controller mode) or a fenced master: nothing to re-put
                await asyncio.sleep(_RETRY_AFTER_S)
                continue
            try:
                wait_s = await self._deliver_due(level, delay_ms)
            except asyncio.CancelledError:
                raise
            except Exception:
                _log.exception("delay delivery failed; retrying", level=level)
                wait_s = _RETRY_AFTER_S
            if wait_s is None:
                await wake.wait()
            elif wait_s > 0:
                await asyncio.sleep(wait_s)  # the head decides; later arrivals are due later

    async def _deliver_due(self, level: int, delay_ms: int) -> float | None:
        """Deliver every due message at the head of the level's queue. Returns seconds until the head is due, 0 to
        go on at once, or None when the queue is drained (wait for an arrival)."""
        offset = self._offsets.get(level, 0)
        result = await self._store.get_message(
            GetRequest(SCHEDULE_GROUP, T.SCHEDULE_TOPIC, level - 1, offset, _BATCH, 4 * 1024 * 1024)
        )
        status = result.status.name
        if status != "FOUND":
            if result.next_begin_offset != offset and status not in ("OFFSET_OVERFLOW_ONE", "OFFSET_FOUND_NULL"):
                self._set_offset(level, result.next_begin_offset)
                return 0
            return None
        now_ms = time.time() * 1000
        for msg in result.messages():
            due = msg.store_timestamp + delay_ms
            if due > now_ms:
                return (due - now_ms) / 1000
            await self._redeliver(msg)
            self._set_offset(level, msg.queue_offset + 1)
        if result.next_begin_offset > self._offsets.get(level, 0):
            self._set_offset(level, result.next_begin_offset)
        return 0

    def _set_offset(self, level: int, offset: int) -> None:
        self._offsets[level] = offset
        self._writer.mark_dirty_later()

    async def _redeliver(self, m: MessageExt) -> None:
        props = dict(m.properties)
        topic = props.get(PropertyKey.REAL_TOPIC)
        if not topic:
            _log.warning("delayed message without REAL_TOPIC dropped", offset=m.queue_offset)
            return
        qid = int(props.get(PropertyKey.REAL_QID, "0") or 0)
        # the re-put record keeps DELAY (and REAL_TOPIC / REAL_QID), as J's messageTimeUp stores it: its properties
        # string is built before the level is cleared, so consumers of Apache RocketMQ see DELAY on delayed messages
        # and on retries (tests/reference). A RocketMQ 5 delivery time goes to the timer (broker.services.timer), not
        # through the levels.
        result = await self._store.put_message(
            PutRequest.from_ext(m, topic=topic, queue_id=qid, properties=encode_properties(props)),
            wait=False,  # J's messageTimeup: setWaitStoreMsgOK(false) (a SYNC_MASTER re-put waits for no slave)
        )
        if result.status is not PutMessageStatus.PUT_OK:
            raise RuntimeError(f"re-put of a delayed message failed: {result.status.name}")
        self.delivered += 1
