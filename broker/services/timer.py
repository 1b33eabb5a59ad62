"""TimerService: messages with any delivery time (RocketMQ 5's timer, J ``HookUtils`` + ``TimerMessageStore``).

Diversion (``divert``; the send handlers and the gRPC endpoint reach it through ``ScheduleService.divert``): a
message with ``TIMER_DELAY_SEC``, ``TIMER_DELAY_MS`` or ``TIMER_DELIVER_MS`` (tried in that order; delays are from
now) and no ``TIMER_OUT_MS`` whose delivery time is ahead is stored to ``rmq_sys_wheel_timer`` queue 0 with
``TIMER_OUT_MS`` = its delivery time rounded down to ``timerPrecisionMs`` (an exact multiple goes one precision
lower), ``REAL_TOPIC`` and ``REAL_QID``. A delivery time already past leaves the message as it is. J's refusals:

============================================================ =============== =====================================
case                                                         code            remark
============================================================ =============== =====================================
``timerWheelEnable=false``                                   SYSTEM_ERROR    accurate timer message is not enabled,
                                                                             timerWheelEnable is false
a value that is not a number, or more than timerMaxDelaySec  MESSAGE_ILLEGAL timer message illegal, the delay time
ahead                                                                        should not be bigger than the max
                                                                             delay <N>ms; or if set del msg, ...
============================================================ =============== =====================================

Wheel: the enqueue task reads the timer topic's consume queue from its checkpointed offset and links each message
into the slot of its TIMER_OUT_MS (``broker.services.timer_wheel``: a memory-mapped slot table and an append-only
unit log, so pending timers live on disk). The dequeue task delivers slot ``S`` once the clock reaches
``S + precision`` (so never before the delivery time, at most one precision after it): each message is stored again
to REAL_TOPIC / REAL_QID with ``TIMER_ENQUEUE_MS`` and ``TIMER_DEQUEUE_MS`` added, REAL_TOPIC / REAL_QID kept (J's
``convertMessage`` clears them from the property map but the stored copy still carries them: seen with the Java
client on Apache RocketMQ 5.5.0), as a normal message. A message whose slot has already passed when it is enqueued (a
restart after its time) is delivered at once.

Checkpoint ``<storePathRootDir>/config/timercheck`` (JSON, written after each delivered slot and every second while
enqueueing)::

    {"enqueueOffset": 12, "dequeueMs": 1764280000000, "logEnd": 480, "segments": {"0": 1764283600000},
     "timing": {"TopicA": 3}}

Recovery: units appended after ``logEnd`` are unlinked from their slots and cut, and the consume queue is read again
from ``enqueueOffset``; slots from ``dequeueMs`` on are delivered again. A crash may so deliver a message twice (as
J, at least once), never lose one or deliver it early. A wheel file that is missing or sized for another
precision/max delay is rebuilt from the whole timer queue (messages of slots before ``dequeueMs`` that were enqueued
before the crash count as delivered).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import structlog

from broker.persistence import JsonFile, dumps
from broker.services.timer_wheel import TimerLog, TimerWheel, Unit
from broker.store.dispatcher import Arrival
from broker.store.message_store import MessageStore
from broker.store.request import PutRequest
from broker.store.results import PutMessageStatus
from protocol.codes import ResponseCode
from protocol.message_properties import PropertyKey, encode_properties, get_property
from protocol.record import record_properties
from protocol.record_decode import decode_record
from runtime.tasks import stop_tasks

_log = structlog.get_logger("rocketq.broker.timer")

TIMER_TOPIC = "rmq_sys_wheel_timer"
TIMER_DELIVER_MS = "TIMER_DELIVER_MS"
TIMER_DELAY_SEC = "TIMER_DELAY_SEC"
TIMER_DELAY_MS = "TIMER_DELAY_MS"
TIMER_OUT_MS = "TIMER_OUT_MS"
TIMER_ENQUEUE_MS = "TIMER_ENQUEUE_MS"
TIMER_DEQUEUE_MS = "TIMER_DEQUEUE_MS"
TIMER_DEL_UNIQKEY = "TIMER_DEL_UNIQKEY"
TIMER_KEYS = (TIMER_DELIVER_MS, TIMER_DELAY_SEC, TIMER_DELAY_MS)
_BATCH = 256
_CHECKPOINT_S = 1.0
_IDLE_POLL_S = 0.5


class TimerRejected(Exception):
    """A timer message the broker refuses (J's WHEEL_TIMER_* put statuses): ``code`` and ``remark`` of the reply."""

    def __init__(self, code: int, remark: str) -> None:
        super().__init__(remark)
        self.code = code
        self.remark = remark


@dataclass(frozen=True, slots=True)
class TimerSettings:
    enable: bool = True  # timerWheelEnable
    precision_ms: int = 1000  # timerPrecisionMs
    max_delay_sec: int = 3 * 24 * 3600  # timerMaxDelaySec
    root_dir: str = ""  # storePathRootDir
    log_segment_units: int = 1 << 20  # 40 MiB timer-log segments


def has_timer(props: Mapping[str, str]) -> bool:
    """J ``checkIfTimerMessage`` for a message without a delay level."""
    if TIMER_OUT_MS in props:
        return False
    return TIMER_DELIVER_MS in props or TIMER_DELAY_MS in props or TIMER_DELAY_SEC in props


def strip_timer(props: dict[str, str]) -> None:
    """A delay level wins over a timer (J clears the timer properties)."""
    for k in TIMER_KEYS:
        props.pop(k, None)


class TimerService:
    def __init__(self, store: MessageStore, settings: TimerSettings, clock: Callable[[], float] = time.time) -> None:
        self._store = store
        self.settings = settings
        self._clock = clock
        self._prec = settings.precision_ms
        self._wheel: TimerWheel | None = None
        self._log: TimerLog | None = None
        self._file = JsonFile(Path(settings.root_dir) / "config" / "timercheck")
        self.enqueue_offset = 0
        self.dequeue_ms = 0
        self._seg_max: dict[int, int] = {}
        self._skip_delivered_below = (0, 0)  # (queue offset, slot ms): a rebuilt wheel skips what was delivered
        self._delivering = -1  # the slot being delivered
        self._slot_done = asyncio.Event()
        self.timing: dict[str, int] = {}  # messages waiting, per real topic
        self.enqueue_total: dict[str, int] = {}
        self.dequeue_total: dict[str, int] = {}
        self._wake = asyncio.Event()
        self._save_lock = asyncio.Lock()
        self._writing: asyncio.Future[None] | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._dirty = False

    def now_ms(self) -> int:
        return int(self._clock() * 1000)

    # -- diversion (both front ends) -------------------------------------------------------------------------------

    def divert(self, topic: str, queue_id: int, props: dict[str, str]) -> tuple[str, int]:
        """J ``transformTimerMessage``: where a message with timer properties is stored (``props`` is updated).
        Raises ``TimerRejected``."""
        s = self.settings
        if not s.enable:
            raise TimerRejected(
                ResponseCode.SYSTEM_ERROR, "accurate timer message is not enabled, timerWheelEnable is false"
            )
        now = self.now_ms()
        try:
            if TIMER_DELAY_SEC in props:
                deliver = now + int(props[TIMER_DELAY_SEC]) * 1000
            elif TIMER_DELAY_MS in props:
                deliver = now + int(props[TIMER_DELAY_MS])
            else:
                deliver = int(props[TIMER_DELIVER_MS])
        except ValueError:
            raise self._illegal() from None
        if deliver <= now:
            if TIMER_DEL_UNIQKEY in props:
                raise self._illegal()
            return topic, queue_id
        if deliver - now > s.max_delay_sec * 1000:
            raise self._illegal()
        prec = self._prec
        deliver = deliver - prec if deliver % prec == 0 else deliver // prec * prec
        props[TIMER_OUT_MS] = str(deliver)
        props[PropertyKey.REAL_TOPIC] = topic
        props[PropertyKey.REAL_QID] = str(queue_id)
        return TIMER_TOPIC, 0

    def _illegal(self) -> TimerRejected:
        return TimerRejected(
            ResponseCode.MESSAGE_ILLEGAL,
            "timer message illegal, the delay time should not be bigger than the max delay "
            f"{self.settings.max_delay_sec * 1000}ms; or if set del msg, the delay time should be bigger than the "
            "current time",
        )

    # -- lifecycle -------------------------------------------------------------------------------------------------

    def open(self) -> None:
        """Open the wheel and the log and recover them against the checkpoint (no-op when the wheel is off)."""
        s = self.settings
        if not s.enable:
            return
        root = Path(s.root_dir)
        slots = 2 * s.max_delay_sec * 1000 // self._prec + 2
        self._wheel = wheel = TimerWheel(root / "timerwheel", slots, self._prec)
        self._log = log = TimerLog(root / "timerlog", s.log_segment_units)
        doc = self._file.load()
        doc = doc if isinstance(doc, dict) else {}
        self.enqueue_offset = int(doc.get("enqueueOffset", 0))
        self.dequeue_ms = int(doc.get("dequeueMs", 0)) or self.now_ms() // self._prec * self._prec
        self.timing = {str(k): int(v) for k, v in (doc.get("timing") or {}).items()}
        self._seg_max = {int(k): int(v) for k, v in (doc.get("segments") or {}).items()}
        log_end = int(doc.get("logEnd", 0))
        if wheel.fresh and (log.end > 0 or self.enqueue_offset > 0):
            _log.warning("timer wheel rebuilt from the timer queue", enqueue_offset=self.enqueue_offset)
            self._skip_delivered_below = (self.enqueue_offset, self.dequeue_ms)
            for start in log.segments():
                log.delete_segment(start)
            log.truncate(0)
            self._seg_max.clear()
            self.timing.clear()
            self.enqueue_offset = 0
            return
        self._undo_after(log_end)
        for start in log.segments():
            if start not in self._seg_max:
                units = log.read_segment(start)
                self._seg_max[start] = max((u.slot_ms for u in units), default=0)

    def _undo_after(self, log_end: int) -> None:
        """Unlink the units the checkpoint does not cover (appended after it), newest first, and cut them off."""
        wheel, log = self._wheel, self._log
        assert wheel is not None and log is not None
        if log.end <= log_end:
            return
        tail: list[Unit] = []
        for start in log.segments():
            if start + log.segment_bytes > log_end:
                tail.extend(u for u in log.read_segment(start) if u.pos >= log_end)
        for u in reversed(tail):
            slot_ms, last, count = wheel.get(u.slot_ms)
            if last == u.pos:
                wheel.put(u.slot_ms, slot_ms, u.prev, count - 1)
        log.truncate(log_end)
        _log.info("timer log cut back to its checkpoint", units=len(tail))

    def start(self) -> None:
        if self._wheel is None:
            return
        loop = asyncio.get_running_loop()
        self._tasks = [
            loop.create_task(self._dequeue_loop(), name="timer-dequeue"),
            loop.create_task(self._enqueue_loop(), name="timer-enqueue"),
            loop.create_task(self._checkpoint_loop(), name="timer-checkpoint"),
        ]

    async def stop(self) -> None:
        tasks, self._tasks = self._tasks, []
        await stop_tasks(*tasks)
        if self._wheel is not None and self._log is not None:
            await self._save()
            self._wheel.close()
            self._log.close()
            self._wheel = self._log = None

    def on_arrival(self, arrival: Arrival) -> None:
        """Store arrival listener: a message reached the timer queue."""
        if arrival.topic == TIMER_TOPIC:
            self._wake.set()

    # -- enqueue ---------------------------------------------------------------------------------------------------

    async def _enqueue_loop(self) -> None:
        while True:
            self._wake.clear()
            try:
                n = await self._enqueue_batch()
            except asyncio.CancelledError:
                raise
            except Exception:
                _log.exception("timer enqueue failed; retrying")
                await asyncio.sleep(1.0)
                continue
            if n == 0:  # an arrival wakes it; the poll covers queues still being recovered after a restart
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(_IDLE_POLL_S):
                        await self._wake.wait()
            else:
                await asyncio.sleep(0)

    async def _enqueue_batch(self) -> int:
        got = self._store.read_consume_queue(TIMER_TOPIC, 0, self.enqueue_offset, _BATCH)
        if got is None:
            return 0
        if self.enqueue_offset < got.min_offset:  # removed by retention before it was read
            self.enqueue_offset = got.min_offset
            got = self._store.read_consume_queue(TIMER_TOPIC, 0, self.enqueue_offset, _BATCH)
            if got is None:
                return 0
        now = self.now_ms()
        skip_below_offset, skip_below_ms = self._skip_delivered_below
        for unit in got.units:
            offset = self.enqueue_offset
            raw = self._store.select_one_message_by_offset(unit.phys_offset, unit.size)
            text = record_properties(raw) if raw is not None else ""
            out = get_property(text, TIMER_OUT_MS)
            topic = get_property(text, PropertyKey.REAL_TOPIC) or ""
            self._dirty = True
            if raw is None or out is None or not out.lstrip("-").isdigit():
                _log.warning("timer message unreadable, skipped", queue_offset=offset)
                self.enqueue_offset = offset + 1
                continue
            slot_ms = int(out)
            if offset < skip_below_offset and slot_ms < skip_below_ms:
                self.enqueue_offset = offset + 1
                continue  # a rebuilt wheel: delivered before the crash
            self.enqueue_total[topic] = self.enqueue_total.get(topic, 0) + 1
            enqueue_ms = now // self._prec * self._prec  # J: the wheel's write time
            if slot_ms < self.dequeue_ms or slot_ms == self._delivering:  # its slot has passed (or is being
                # delivered): deliver now, and move past it only then (a checkpoint in between must not skip it)
                await self._deliver(Unit(-1, -1, unit.phys_offset, unit.size, slot_ms, enqueue_ms))
            else:
                while self._delivering >= 0 and self._wheel_index(slot_ms) == self._wheel_index(self._delivering):
                    await self._slot_done.wait()  # a later round of the slot being delivered: link it after
                self._link(unit.phys_offset, unit.size, slot_ms, enqueue_ms)
                self.timing[topic] = self.timing.get(topic, 0) + 1
            self.enqueue_offset = offset + 1
        return len(got.units)

    def _wheel_index(self, t_ms: int) -> int:
        assert self._wheel is not None
        return self._wheel.index(t_ms)

    def _link(self, phys: int, size: int, slot_ms: int, enqueue_ms: int) -> None:
        wheel, log = self._wheel, self._log
        assert wheel is not None and log is not None
        cur_ms, last, count = wheel.get(slot_ms)
        pos = log.append(last if count else -1, phys, size, slot_ms, enqueue_ms)
        wheel.put(slot_ms, slot_ms if count == 0 else min(cur_ms, slot_ms), pos, count + 1)
        seg = pos - pos % log.segment_bytes
        if self._seg_max.get(seg, -1) < slot_ms:
            self._seg_max[seg] = slot_ms

    # -- dequeue ---------------------------------------------------------------------------------------------------

    async def _dequeue_loop(self) -> None:
        prec = self._prec
        idle = 0
        while True:
            wait_ms = self.dequeue_ms + prec - self.now_ms()
            if wait_ms > 0:
                await asyncio.sleep(wait_ms / 1000)
                continue
            try:
                delivered = await self._dequeue_slot(self.dequeue_ms)
            except asyncio.CancelledError:
                raise
            except Exception:
                _log.exception("timer delivery failed; retrying", slot_ms=self.dequeue_ms)
                await asyncio.sleep(1.0)
                continue
            self.dequeue_ms += prec
            if delivered:
                await self._save()
            idle += 1
            if idle % 1024 == 0:  # catching up over many empty slots: let others run
                await asyncio.sleep(0)

    async def _dequeue_slot(self, s_ms: int) -> int:
        wheel, log = self._wheel, self._log
        assert wheel is not None and log is not None
        slot_ms, last, count = wheel.get(s_ms)
        if count == 0 or slot_ms > s_ms:
            return 0
        chain: list[Unit] = []
        pos = last
        while pos != -1:
            u = log.read(pos)
            if u is None:
                break
            chain.append(u)
            pos = u.prev
        chain.reverse()  # oldest first
        # The slot is emptied only once every due unit is delivered (a crash before that delivers the slot again);
        # meanwhile the enqueue task delivers this slot's newcomers itself and waits with later rounds of its index.
        self._delivering = s_ms
        self._slot_done.clear()
        try:
            due = [u for u in chain if u.slot_ms <= s_ms]
            for u in due:
                await self._deliver(u)
            wheel.put(s_ms, -1, -1, 0)
            for u in chain:
                if u.slot_ms > s_ms:  # a later round sharing the slot: linked again
                    self._link(u.phys, u.size, u.slot_ms, u.enqueue_ms)
        finally:
            self._delivering = -1
            self._slot_done.set()
        return len(due)

    async def _deliver(self, u: Unit) -> None:
        raw = self._store.select_one_message_by_offset(u.phys, u.size)
        if raw is None:
            _log.warning("timer message gone from the commit log (retention), not delivered", phys=u.phys)
            return
        m = decode_record(raw)[0]
        props = dict(m.properties)
        topic = props.get(PropertyKey.REAL_TOPIC, "")  # kept on the delivered copy, as Apache RocketMQ 5.5.0 does
        qid = int(props.get(PropertyKey.REAL_QID, "0") or 0)
        if u.pos >= 0:
            self.timing[topic] = max(0, self.timing.get(topic, 0) - 1)
        if not topic:
            _log.warning("timer message without REAL_TOPIC dropped", phys=u.phys)
            return
        props[TIMER_ENQUEUE_MS] = str(u.enqueue_ms)
        props[TIMER_DEQUEUE_MS] = str(self.now_ms())
        result = await self._store.put_message(
            PutRequest.from_ext(m, topic=topic, queue_id=qid, properties=encode_properties(props)), wait=False
        )
        if result.status is not PutMessageStatus.PUT_OK:
            raise RuntimeError(f"re-put of a timer message failed: {result.status.name}")
        self.dequeue_total[topic] = self.dequeue_total.get(topic, 0) + 1

    # -- checkpoint ------------------------------------------------------------------------------------------------

    def _snapshot(self) -> dict[str, Any]:
        log = self._log
        assert log is not None
        return {
            "enqueueOffset": self.enqueue_offset,
            "dequeueMs": self.dequeue_ms,
            "logEnd": log.end,
            "segments": {str(k): v for k, v in sorted(self._seg_max.items())},
            "timing": {k: v for k, v in sorted(self.timing.items()) if v},
        }

    async def _save(self) -> None:
        """Flush the wheel and the log, then write the checkpoint that describes them (in a worker thread)."""
        async with self._save_lock:
            if self._writing is not None and not self._writing.done():  # a cancelled caller's write still runs
                await asyncio.wait([self._writing])
            wheel, log = self._wheel, self._log
            if wheel is None or log is None:
                return
            self._drop_delivered_segments()
            doc = dumps(self._snapshot(), pretty=False)
            self._dirty = False

            def write() -> None:
                wheel.flush()
                log.flush()
                self._file.save(doc)

            self._writing = asyncio.ensure_future(asyncio.to_thread(write))
            await asyncio.shield(self._writing)

    def _drop_delivered_segments(self) -> None:
        log = self._log
        assert log is not None
        current = log.end - log.end % log.segment_bytes
        for start in log.segments():
            if start != current and self._seg_max.get(start, 1 << 62) < self.dequeue_ms:
                log.delete_segment(start)
                self._seg_max.pop(start, None)

    async def _checkpoint_loop(self) -> None:
        while True:
            await asyncio.sleep(_CHECKPOINT_S)
            if self._dirty:
                with contextlib.suppress(OSError):
                    await self._save()

    # -- metrics ---------------------------------------------------------------------------------------------------

    def enqueue_lag(self) -> int:
        """Messages in the timer queue not yet read into the wheel."""
        if self._wheel is None:
            return 0
        return max(0, self._store.get_max_offset_in_queue(TIMER_TOPIC, 0) - self.enqueue_offset)

    def dequeue_lag(self) -> int:
        """Messages in slots whose time has come but that are not delivered yet."""
        wheel = self._wheel
        if wheel is None:
            return 0
        now = self.now_ms()
        n, s, steps = 0, self.dequeue_ms, 0
        while s + self._prec <= now and steps < 3600:
            n += wheel.get(s)[2]
            s += self._prec
            steps += 1
        return n

    def enqueue_latency_ms(self) -> int:
        """Age of the oldest message of the timer queue not yet in the wheel (0 when none waits)."""
        if self.enqueue_lag() == 0:
            return 0
        ts = self._store.get_message_store_timestamp(TIMER_TOPIC, 0, self.enqueue_offset)
        return max(0, self.now_ms() - ts) if ts > 0 else 0

    def dequeue_latency_ms(self) -> int:
        """How far the delivery cursor is behind the clock (0 when on time)."""
        if self._wheel is None:
            return 0
        return max(0, self.now_ms() - (self.dequeue_ms + self._prec))
