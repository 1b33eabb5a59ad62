"""The connector's only door to RocketMQ: small synchronous sessions over the project's public ``client`` API.

Spark calls the connector from plain threads (the driver's planner worker, executor tasks), while the client is
asyncio. Each Python process therefore runs one private event loop in a daemon thread (:class:`_Loop`), and the
sessions below submit coroutines to it and block on the result. A Spark worker is forked from Spark's daemon and then
reused for many tasks, so the loop, the pull sessions and the producers are created on first use in the process that
uses them (a fork is detected by pid) and cached for the following tasks; they are closed at interpreter exit.

* :class:`AdminSession` (driver): topics, a topic's readable queues, min/max offsets, search by timestamp, and the
  consumer-group offset commit behind ``consumerGroup``.
* :class:`PullSession` (executors): ``pull(queue, offset, max_nums)`` without long polling.
* :class:`ProducerSession` (executors, sink): ``send_all(messages)`` with a bounded window of sends in flight,
  returning only when every one was acknowledged; the first failure raises with the broker's remark.

Only names exported by ``client`` are used here (import-linter forbids ``protocol``/``broker``/``namesrv``); they are
imported where a session is made, so the reader's value types import without a client.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import os
import threading
import uuid
from collections import deque
from collections.abc import Awaitable, Coroutine, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from spark_connector.offsets import QueueKey
from spark_connector.planning import QueueBounds

if TYPE_CHECKING:
    from client import MessageQueue, PullConsumer

T = TypeVar("T")

SEND_WINDOW = 128  # sends in flight per task


@dataclass(frozen=True, slots=True)
class PulledMessage:
    """What the reader needs of one pulled message."""

    queue_offset: int
    msg_id: str | None
    body: bytes
    properties: dict[str, str]
    born_timestamp: int
    store_timestamp: int
    born_host: str | None
    reconsume_times: int


@dataclass(frozen=True, slots=True)
class Pulled:
    """One pull answer: status FOUND | NO_NEW_MSG | NO_MATCHED_MSG | OFFSET_ILLEGAL, and the queue's bounds."""

    status: str
    next_begin_offset: int
    min_offset: int
    max_offset: int
    messages: list[PulledMessage]


@dataclass(frozen=True, slots=True)
class OutgoingMessage:
    """One row of the sink, ready to send."""

    topic: str
    body: bytes
    tags: str | None
    keys: str | None
    properties: dict[str, str] | None


class SendError(RuntimeError):
    """A sink send the broker refused or that did not complete; the message carries the broker's remark."""


class _Loop:
    """A private asyncio event loop in a daemon thread; :meth:`run` blocks the calling thread on a coroutine."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="rocketmq-spark-loop", daemon=True)
        self.thread.start()

    def run(self, coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)


_lock = threading.Lock()
_pid: int | None = None
_loop: _Loop | None = None
_pullers: dict[tuple[str, int], PullSession] = {}
_producers: dict[tuple[str, str, int], ProducerSession] = {}


def _process_loop() -> _Loop:
    """This process's loop; after a fork the parent's loop, sessions and sockets are dropped, not shared."""
    global _pid, _loop
    with _lock:
        if _pid != os.getpid() or _loop is None:
            _pid, _loop = os.getpid(), _Loop()
            _pullers.clear()
            _producers.clear()
        return _loop


def _queue(q: QueueKey) -> MessageQueue:
    from client import MessageQueue

    return MessageQueue(q.topic, q.broker, q.queue_id)


def _key(mq: Any) -> QueueKey:
    return QueueKey(mq.topic, mq.broker_name, int(mq.queue_id))


def _instance_name(kind: str) -> str:
    return f"spark-{kind}-{os.getpid()}-{uuid.uuid4().hex[:8]}"


class AdminSession:
    """Driver-side look-ups, through one started ``PullConsumer`` (nothing is subscribed, nothing is rebalanced)."""

    def __init__(self, namesrv_addrs: list[str], timeout_ms: int) -> None:
        from client import PullConsumer

        self._loop = _process_loop()
        self._timeout = timeout_ms / 1000
        self._consumer = PullConsumer(
            "spark-rocketmq-admin", namesrv_addr=";".join(namesrv_addrs), instance_name=_instance_name("admin")
        )
        self._run(self._consumer.start())
        self._groups: dict[str, PullConsumer] = {}
        self._addrs = namesrv_addrs

    def _run(self, aw: Awaitable[T]) -> T:
        async def call() -> T:
            return await asyncio.wait_for(aw, self._timeout)

        return self._loop.run(call())

    def topics(self) -> list[str]:
        return sorted(self._run(self._consumer.fetch_topic_list()))

    def queues(self, topic: str) -> list[QueueKey]:
        """The readable queues of ``topic`` (none when the topic does not exist yet)."""
        return sorted(_key(mq) for mq in self._run(self._consumer.fetch_subscribe_queues(topic)))

    def bounds(self, queues: Iterable[QueueKey]) -> dict[QueueKey, QueueBounds]:
        qs = list(queues)

        async def all_bounds() -> list[tuple[int, int]]:
            async def one(q: QueueKey) -> tuple[int, int]:
                mq = _queue(q)
                lo, hi = await asyncio.gather(self._consumer.min_offset(mq), self._consumer.max_offset(mq))
                return int(lo), int(hi)

            return list(await asyncio.gather(*(one(q) for q in qs)))

        return {q: QueueBounds(lo, hi) for q, (lo, hi) in zip(qs, self._run(all_bounds()), strict=True)}

    def search_offset(self, queue: QueueKey, timestamp_ms: int) -> int:
        return int(self._run(self._consumer.search_offset(_queue(queue), timestamp_ms)))

    def commit_offsets(self, group: str, offsets: Mapping[QueueKey, int]) -> None:
        from client import PullConsumer

        consumer = self._groups.get(group)
        if consumer is None:
            consumer = PullConsumer(group, namesrv_addr=";".join(self._addrs), instance_name=_instance_name("lag"))
            self._run(consumer.start())
            self._groups[group] = consumer
        self._run(consumer.commit({_queue(q): off for q, off in offsets.items()}))

    def close(self) -> None:
        for consumer in [self._consumer, *self._groups.values()]:
            try:
                self._run(consumer.close())
            except Exception:
                pass
        self._groups.clear()


class PullSession:
    """Executor-side pulls for one name-server list; one per worker process, shared by its tasks."""

    def __init__(self, namesrv_addrs: list[str], timeout_ms: int) -> None:
        from client import PullConsumer

        self._loop = _process_loop()
        self._timeout = timeout_ms / 1000
        self._consumer = PullConsumer(
            "spark-rocketmq-reader", namesrv_addr=";".join(namesrv_addrs), instance_name=_instance_name("reader")
        )
        self._loop.run(self._consumer.start(), self._timeout)

    def pull(self, queue: QueueKey, offset: int, max_nums: int) -> Pulled:
        async def call() -> Any:
            return await asyncio.wait_for(self._consumer.pull(_queue(queue), offset, max_nums), self._timeout)

        res = self._loop.run(call())
        return Pulled(
            status=str(getattr(res.status, "name", res.status)),
            next_begin_offset=int(res.next_begin_offset),
            min_offset=int(res.min_offset),
            max_offset=int(res.max_offset),
            messages=[
                PulledMessage(
                    queue_offset=int(m.queue_offset),
                    msg_id=m.msg_id,
                    body=bytes(m.body),
                    properties=dict(m.properties),
                    born_timestamp=int(m.born_timestamp),
                    store_timestamp=int(m.store_timestamp),
                    born_host=None if m.born_host is None else str(m.born_host),
                    reconsume_times=int(m.reconsume_times),
                )
                for m in res.msg_found_list
            ],
        )

    def close(self) -> None:
        self._loop.run(self._consumer.close(), self._timeout)


class ProducerSession:
    """Executor-side sends for one (name servers, group); one per worker process, shared by its tasks."""

    def __init__(self, namesrv_addrs: list[str], group: str, timeout_ms: int) -> None:
        from client import Producer

        self._loop = _process_loop()
        self._timeout = timeout_ms / 1000
        self._producer = Producer(
            group,
            namesrv_addr=";".join(namesrv_addrs),
            instance_name=_instance_name("sink"),
            send_timeout_ms=timeout_ms,
        )
        self._loop.run(self._producer.start(), self._timeout + 10)

    def send_all(self, messages: Iterable[OutgoingMessage]) -> int:
        """Send every message; return their count once all were acknowledged. Raises :class:`SendError`."""
        it = iter(messages)

        from client import Message

        async def send(m: OutgoingMessage) -> None:
            msg = Message(
                m.topic,
                m.body,
                tags=m.tags,
                keys=m.keys.split() if m.keys else None,
                properties=dict(m.properties or {}),
            )
            try:
                result = await self._producer.send(msg)
            except Exception as exc:
                remark = getattr(exc, "remark", None) or str(exc)
                raise SendError(f"rocketmq sink: sending to topic {m.topic!r} failed: {remark}") from exc
            status = getattr(result, "send_status", getattr(result, "status", None))
            name = str(getattr(status, "name", status))
            if status is not None and name not in ("SEND_OK", "0"):
                raise SendError(f"rocketmq sink: the broker stored a message to {m.topic!r} with status {name}")

        # The caller's thread iterates the rows (Spark's iterator reads its socket there); the loop thread only
        # sends. At most SEND_WINDOW sends are in flight; the oldest is awaited first, so errors surface in order.
        window: deque[concurrent.futures.Future[None]] = deque()
        sent = 0
        try:
            for m in it:
                if len(window) >= SEND_WINDOW:
                    window.popleft().result()
                window.append(asyncio.run_coroutine_threadsafe(send(m), self._loop.loop))
                sent += 1
            while window:
                window.popleft().result()
        finally:
            for f in window:
                f.cancel()
        return sent

    def close(self) -> None:
        self._loop.run(self._producer.close(), self._timeout)


def pull_session(namesrv_addrs: list[str], timeout_ms: int) -> PullSession:
    """This process's pull session for ``namesrv_addrs`` (created on first use)."""
    _process_loop()
    key = (";".join(namesrv_addrs), timeout_ms)
    with _lock:
        session = _pullers.get(key)
    if session is None:
        session = PullSession(namesrv_addrs, timeout_ms)
        with _lock:
            session = _pullers.setdefault(key, session)
    return session


def producer_session(namesrv_addrs: list[str], group: str, timeout_ms: int) -> ProducerSession:
    """This process's producer for ``(namesrv_addrs, group)`` (created on first use)."""
    _process_loop()
    key = (";".join(namesrv_addrs), group, timeout_ms)
    with _lock:
        session = _producers.get(key)
    if session is None:
        session = ProducerSession(namesrv_addrs, group, timeout_ms)
        with _lock:
            session = _producers.setdefault(key, session)
    return session


@atexit.register
def _close_all() -> None:
    if _pid != os.getpid():
        return
    sessions: list[PullSession | ProducerSession] = [*_pullers.values(), *_producers.values()]
    for s in sessions:
        try:
            s.close()
        except Exception:
            pass
