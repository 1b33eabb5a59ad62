"""The connector's only door to RocketMQ: small synchronous sessions over the project's public ``client`` API.

Spark calls the connector from plain threads (driver planner, executor tasks); the client is asyncio. Admin and
producer sessions submit coroutines to one private loop per process in a daemon thread (:class:`_Loop`). A pull
session's loop is run by the reading task's own thread while it waits (:class:`PendingWindow`), so no loop thread
takes the GIL from the task building Arrow batches. Spark reuses a forked worker for many tasks: loops and sessions
are made on first use in the process using them (a fork is detected by pid), cached, and closed at exit.

* :class:`AdminSession` (driver): topics, readable queues, min/max offsets, search by timestamp, group offset commit.
* :class:`PullSession` (executors, one per thread): pipelined, retried pulls of offset windows, answered undecoded
  (``client.bulk.pull_raw``) for the reader to decode into Arrow columns.
* :class:`ProducerSession` (sink): ``send_batches``, ``send_encoded`` (and ``send_all``) with a bounded window in
  flight, returning when every send was acknowledged; the first failure raises with the broker's remark.
* :func:`with_retries`: the driver's retry-with-backoff around route and offset look-ups.

Only names ``client`` exports are used (import-linter), imported where a session is made.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import functools
import logging
import os
import threading
import time
import uuid
from collections import deque
from collections.abc import Awaitable, Callable, Coroutine, Generator, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypedDict, TypeVar

from spark_connector.offsets import QueueKey
from spark_connector.planning import QueueBounds

if TYPE_CHECKING:
    from client import MessageQueue, PullConsumer
    from client.bulk import RawPullResult
    from spark_connector.options import Security
    from spark_connector.sink_columns import EncodedBatch

import structlog

T = TypeVar("T")
# structlog over stdlib logging: silent below WARNING unless the application configures logging (Spark workers).
log = structlog.wrap_logger(logging.getLogger(__name__))

SEND_WINDOW = 128  # sends in flight per task
SEARCH_STEPS = 64  # messages read from the broker's answer to the first stored at or after a timestamp


class FetchError(RuntimeError):
    """A pull or look-up still failing after ``fetchRetries`` retries. The message leads with the cause; the cause's
    traceback is not chained, since Spark embeds the Python traceback in its error text and would bury the cause."""

    @classmethod
    def after_retries(cls, what: str, retries: int, exc: BaseException) -> FetchError:
        cause = " ".join(str(exc).split()) or type(exc).__name__
        return cls(f"rocketmq: {cause} ({what} failed after {retries} retries; {type(exc).__name__})")


F = TypeVar("F", bound=Callable[..., Any])


def cause_first(method: F) -> F:
    """For the methods Spark calls: a FetchError or SendError leaves with its traceback cut to this frame, so the
    text Spark embeds in its error is the cause in three lines, not the connector's and event loop's frames."""

    @functools.wraps(method)
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return method(*args, **kwargs)
        except (FetchError, SendError) as exc:
            raise exc.with_traceback(None) from None

    return call  # type: ignore[return-value]


def with_retries(what: str, backoff_s: list[float], fn: Callable[[], T]) -> T:
    """``fn()``, retried after each delay of ``backoff_s`` when it raises; the last failure raises FetchError."""
    for delay in [*backoff_s, None]:
        try:
            return fn()
        except Exception as exc:
            if delay is None:
                raise FetchError.after_retries(what, len(backoff_s), exc) from None
            log.warning("rocketmq.fetch_retry", what=what, error=repr(exc), retry_in_s=delay)
            time.sleep(delay)
    raise AssertionError("unreachable")


@dataclass(frozen=True, slots=True)
class OutgoingMessage:
    """One row of the sink, ready to send."""

    topic: str
    body: bytes
    tags: str | None
    keys: str | None
    properties: dict[str, str] | None
    queue_id: int | None = None  # pin the queue (the sink's queueId column); None = the producer chooses
    broker: str | None = None  # with queue_id: the broker of that queue (None = the topic's only / first broker)


class SendError(RuntimeError):
    """A sink send the broker refused or that did not complete; the message carries the broker's remark. Like
    FetchError, raised without the client's chained traceback, so Spark's error text shows the cause early."""

    @classmethod
    def failed(cls, topic: str, exc: BaseException) -> SendError:
        remark = getattr(exc, "remark", None) or " ".join(str(exc).split()) or type(exc).__name__
        return cls(f"rocketmq sink: sending to topic {topic!r} failed: {remark}")


class _Loop:
    """A private asyncio event loop in a daemon thread; :meth:`run` blocks the calling thread on a coroutine."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="rocketmq-spark-loop", daemon=True)
        self.thread.start()

    def run(self, coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)


class _DrivenLoop(asyncio.SelectorEventLoop):
    """An event loop run only by the thread waiting on it (:meth:`PendingWindow.result`), whose clock runs only then:
    ``pollTimeoutMs`` counts time spent waiting, not time spent building batches or held by Spark's back-pressure
    (replies that arrived meanwhile wait unread in the kernel's buffer and must not count as late)."""

    def __init__(self) -> None:
        super().__init__()
        self._paused_for = 0.0  # seconds not run so far
        self._paused_at: float | None = time.monotonic()

    def time(self) -> float:
        now = time.monotonic()
        return now - self._paused_for - (0.0 if self._paused_at is None else now - self._paused_at)

    def run_until_complete(self, future: Generator[Any, None, T] | Awaitable[T]) -> T:
        if self.is_running():  # asyncio's own error: the clock is left as it is
            return super().run_until_complete(future)
        if self._paused_at is not None:
            self._paused_for += time.monotonic() - self._paused_at
            self._paused_at = None
        try:
            return super().run_until_complete(future)
        finally:
            self._paused_at = time.monotonic()


_lock = threading.Lock()
_pid: int | None = None
_loop: _Loop | None = None
_pullers: dict[tuple[str, int, Security | None, int], PullSession] = {}
_producers: dict[tuple[str, str, int, Security | None], ProducerSession] = {}


def _forget_after_fork() -> None:
    """After a fork the parent's loop, sessions and sockets are dropped, not shared (caller holds ``_lock``)."""
    global _pid, _loop
    if _pid != os.getpid():
        _pid, _loop = os.getpid(), None
        _pullers.clear()
        _producers.clear()


def _process_loop() -> _Loop:
    """This process's loop thread (admin and producer sessions), started on first use."""
    global _loop
    with _lock:
        _forget_after_fork()
        if _loop is None:
            _loop = _Loop()
        return _loop


def _queue(q: QueueKey) -> MessageQueue:
    from client import MessageQueue

    return MessageQueue(q.topic, q.broker, q.queue_id)


def _key(mq: Any) -> QueueKey:
    return QueueKey(mq.topic, mq.broker_name, int(mq.queue_id))


def _instance_name(kind: str) -> str:
    return f"spark-{kind}-{os.getpid()}-{uuid.uuid4().hex[:8]}"


class _ClientOptions(TypedDict):
    namesrv_addr: str
    instance_name: str
    access_key: str | None
    secret_key: str | None
    use_tls: bool
    tls_trust_cert_path: str | None
    tls_cert_path: str | None
    tls_key_path: str | None


def _client_options(namesrv_addrs: list[str], kind: str, security: Security | None) -> _ClientOptions:
    """The keyword arguments of every client the connector starts (ACL 1.0 keys sign requests; ``use_tls`` dials TLS)."""
    return _ClientOptions(
        namesrv_addr=";".join(namesrv_addrs),
        instance_name=_instance_name(kind),
        access_key=None if security is None else security.access_key,
        secret_key=None if security is None else security.secret_key,
        use_tls=security is not None and security.use_tls,
        tls_trust_cert_path=None if security is None else security.tls_trust_cert_path,
        tls_cert_path=None if security is None else security.tls_cert_path,
        tls_key_path=None if security is None else security.tls_key_path,
    )


class AdminSession:
    """Driver-side look-ups, through one started ``PullConsumer`` (nothing is subscribed, nothing is rebalanced)."""

    def __init__(self, namesrv_addrs: list[str], timeout_ms: int, security: Security | None = None) -> None:
        from client import PullConsumer

        self._loop = _process_loop()
        self._timeout = timeout_ms / 1000
        self._consumer = PullConsumer("spark-rocketmq-admin", **_client_options(namesrv_addrs, "admin", security))
        self._security = security
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
        """The first offset of ``queue`` stored at or after ``timestamp_ms`` (Kafka's ``offsetsForTimes`` rule; the
        queue's max offset when every message is older). rocketq and Apache RocketMQ 5.x answer SEARCH_OFFSET_BY_TIMESTAMP
        that way; a 4.x broker answers the nearer neighbour, which may be the message just before ``timestamp_ms``, or
        any one of several stored in the same millisecond. So step from its answer, one message read per step, to the
        first match."""
        mq = _queue(queue)

        async def first_at_or_after() -> int:
            off = int(await self._consumer.search_offset(mq, timestamp_ms))
            for _ in range(SEARCH_STEPS):
                t = await self._store_time(mq, off)
                if t is not None and t < timestamp_ms:
                    off += 1
                    continue
                prev = await self._store_time(mq, off - 1) if off > 0 else None
                if prev is not None and prev >= timestamp_ms:
                    off -= 1
                    continue
                break
            return off

        return self._run(first_at_or_after())

    async def _store_time(self, mq: MessageQueue, offset: int) -> int | None:
        """Store time of the message at ``offset``; None when there is none (past the end, or removed)."""
        from client.bulk import decode_columns, pull_raw

        r = await pull_raw(self._consumer, mq, offset, 1)
        if not r.records:
            return None
        cols = decode_columns(r.records, min_offset=offset, end_offset=offset + 1)
        return cols.store_timestamp[0] if cols.queue_offset and cols.queue_offset[0] == offset else None

    def commit_offsets(self, group: str, offsets: Mapping[QueueKey, int]) -> None:
        from client import PullConsumer

        consumer = self._groups.get(group)
        if consumer is None:
            consumer = PullConsumer(
                group,
                **_client_options(self._addrs, "lag", self._security),
            )
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
    """Executor-side pulls for one name-server list; one per worker thread, shared by the tasks it runs.

    :meth:`window` pulls the offsets ``[start, end)`` of one queue on the session's loop (as many requests as the
    broker's transfer limits need) and returns the undecoded replies; several windows run at once, so a task keeps
    ``pullsInFlight`` requests on the wire while it turns earlier replies into Arrow. The loop runs only in the
    thread waiting on a window's ``result()``, so a session belongs to one thread (:func:`pull_session`). Each
    request is retried with backoff (``fetchRetries`` / ``fetchRetryBackoffMs``), so a broker restart shorter than
    that leaves the task running.
    """

    def __init__(self, namesrv_addrs: list[str], timeout_ms: int, security: Security | None = None) -> None:
        from client import PullConsumer

        # Run only by the thread waiting on a window (Spark's task thread): replies are read and the requests of
        # windows started meanwhile go out while it waits; between waits the kernel buffers the replies.
        self._loop = _DrivenLoop()
        self._timeout = timeout_ms / 1000
        self._consumer = PullConsumer(
            "spark-rocketmq-reader",
            **_client_options(namesrv_addrs, "reader", security),
        )
        self._loop.run_until_complete(asyncio.wait_for(self._consumer.start(), self._timeout))

    async def _pull(
        self, mq: MessageQueue, offset: int, max_nums: int, expression: str, backoff_s: list[float]
    ) -> RawPullResult:
        from client.bulk import pull_raw

        for delay in [*backoff_s, None]:
            try:
                return await asyncio.wait_for(pull_raw(self._consumer, mq, offset, max_nums, expression), self._timeout)
            except Exception as exc:
                if delay is None:
                    what = f"pulling {_key(mq)} at offset {offset}"
                    raise FetchError.after_retries(what, len(backoff_s), exc) from None
                log.warning(
                    "rocketmq.pull_retry", queue=str(_key(mq)), offset=offset, error=repr(exc), retry_in_s=delay
                )
                await asyncio.sleep(delay)
        raise AssertionError("unreachable")

    async def _window(
        self, queue: QueueKey, start: int, end: int, max_nums: int, expression: str, backoff_s: list[float]
    ) -> list[RawPullResult]:
        mq = _queue(queue)
        replies: list[RawPullResult] = []
        cursor = start
        while cursor < end:
            res = await self._pull(mq, cursor, min(max_nums, end - cursor), expression, backoff_s)
            replies.append(res)
            if res.status.name != "FOUND" or res.next_begin_offset <= cursor:
                break
            cursor = res.next_begin_offset
        return replies

    def window(
        self, queue: QueueKey, start: int, end: int, max_nums: int, expression: str, backoff_s: list[float]
    ) -> PendingWindow:
        """Start pulling ``[start, end)`` of ``queue``; its ``result()`` is the replies, in offset order. The replies
        stop early at the first that is not FOUND or does not advance (the caller decides what that means)."""
        task = self._loop.create_task(self._window(queue, start, end, max_nums, expression, backoff_s))
        self._loop.run_until_complete(asyncio.sleep(0))  # one pass: the request leaves now, not at the next wait
        return PendingWindow(self._loop, task)

    def close(self) -> None:
        loop = self._loop
        try:
            for task in asyncio.all_tasks(loop):
                task.cancel()
            loop.run_until_complete(asyncio.wait_for(self._consumer.close(), self._timeout))
            loop.run_until_complete(asyncio.sleep(0))  # let the cancelled windows finish
        finally:
            loop.close()


class PendingWindow:
    """One window being pulled on a :class:`PullSession`'s loop; :meth:`result` runs the loop (in the calling
    thread) until the window's replies are in, serving every other pull in flight meanwhile."""

    __slots__ = ("_loop", "_task")

    def __init__(self, loop: _DrivenLoop, task: asyncio.Task[list[RawPullResult]]) -> None:
        self._loop, self._task = loop, task

    def result(self) -> list[RawPullResult]:
        return self._loop.run_until_complete(self._task)

    def cancel(self) -> bool:
        return self._task.cancel()


class ProducerSession:
    """Executor-side sends for one (name servers, group); one per worker process, shared by its tasks."""

    def __init__(self, namesrv_addrs: list[str], group: str, timeout_ms: int, security: Security | None = None) -> None:
        from client import Producer

        self._loop = _process_loop()
        self._timeout = timeout_ms / 1000
        self._producer = Producer(
            group,
            send_timeout_ms=timeout_ms,
            **_client_options(namesrv_addrs, "sink", security),
        )
        self._loop.run(self._producer.start(), self._timeout + 10)
        self._queues: dict[str, list[MessageQueue]] = {}

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
                raise SendError.failed(m.topic, exc) from None
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

    async def _pinned(self, m: OutgoingMessage) -> MessageQueue:
        queues = self._queues.get(m.topic)
        if queues is None:
            try:
                queues = self._queues[m.topic] = sorted(await self._producer.publish_queues(m.topic))
            except Exception as exc:
                raise SendError.failed(m.topic, exc) from None
        match = [q for q in queues if q.queue_id == m.queue_id and m.broker in (None, q.broker_name)]
        if not match:
            have = ", ".join(f"{q.broker_name}/{q.queue_id}" for q in queues)
            where = f"{m.broker}/{m.queue_id}" if m.broker else str(m.queue_id)
            raise SendError(f"rocketmq sink: topic {m.topic!r} has no queue {where} (its queues: {have})")
        return match[0]

    def send_batches(self, batches: Iterable[list[OutgoingMessage]], in_flight: int) -> int:
        """Send each batch (messages of one topic and one pin) as one SEND_BATCH_MESSAGE, at most ``in_flight`` at a
        time; return the message count once every batch was acknowledged. Raises :class:`SendError`."""
        from client import Message

        async def send(batch: list[OutgoingMessage]) -> None:
            first = batch[0]
            msgs = [
                Message(
                    m.topic,
                    m.body,
                    tags=m.tags,
                    keys=m.keys.split() if m.keys else None,
                    properties=dict(m.properties or {}),
                )
                for m in batch
            ]
            queue = None if first.queue_id is None else await self._pinned(first)
            try:
                if len(msgs) == 1:
                    result = await self._producer.send(msgs[0], queue=queue)
                else:
                    result = await self._producer.send_batch(msgs, queue=queue)
            except Exception as exc:
                raise SendError.failed(first.topic, exc) from None
            _check_stored(first.topic, result)

        return self._windowed(((send(batch), len(batch)) for batch in batches), in_flight)

    def send_encoded(self, batches: Iterable[EncodedBatch], in_flight: int) -> int:
        """``send_batches`` for batches the caller encoded (:mod:`spark_connector.sink_columns`): a
        SEND_BATCH_MESSAGE body as is (``client.bulk.send_batch_payload``), or one message as a plain send; the
        producer picks the queue."""
        from client.bulk import send_batch_payload, send_batch_texts

        async def send(batch: EncodedBatch) -> None:
            try:
                if batch.single is not None:
                    result = await send_batch_texts(self._producer, batch.topic, [batch.single])
                else:
                    result = await send_batch_payload(self._producer, batch.topic, batch.payload, batch.msg_ids)
            except Exception as exc:
                raise SendError.failed(batch.topic, exc) from None
            _check_stored(batch.topic, result)

        return self._windowed(((send(batch), batch.count) for batch in batches), in_flight)

    def _windowed(self, sends: Iterable[tuple[Coroutine[Any, Any, None], int]], in_flight: int) -> int:
        """Run the sends on the loop, at most ``in_flight`` at a time, the oldest awaited first (so errors surface in
        order); the caller's thread produces them meanwhile. Returns the messages sent once all were acknowledged."""
        window: deque[tuple[concurrent.futures.Future[None], int]] = deque()
        sent = 0
        it = iter(sends)
        try:
            while True:
                if len(window) >= in_flight:  # before the next coroutine exists: a failure leaves none unawaited
                    fut, done = window.popleft()
                    fut.result()
                    sent += done
                nxt = next(it, None)
                if nxt is None:
                    break
                window.append((asyncio.run_coroutine_threadsafe(nxt[0], self._loop.loop), nxt[1]))
            while window:
                fut, done = window.popleft()
                fut.result()
                sent += done
        finally:
            for f, _ in window:
                f.cancel()
        return sent

    def close(self) -> None:
        self._loop.run(self._producer.close(), self._timeout)


def _check_stored(topic: str, result: Any) -> None:
    name = str(getattr(result.send_status, "name", result.send_status))
    if name != "SEND_OK":
        raise SendError(f"rocketmq sink: the broker stored messages to {topic!r} with status {name}")


def pull_session(namesrv_addrs: list[str], timeout_ms: int, security: Security | None = None) -> PullSession:
    """This thread's pull session for ``namesrv_addrs`` and ``security`` (created on first use; a session's loop runs
    in the thread that waits on it, so each thread has its own; Spark's worker runs its tasks in one thread)."""
    key = (";".join(namesrv_addrs), timeout_ms, security, threading.get_ident())
    with _lock:
        _forget_after_fork()
        session = _pullers.get(key)
    if session is None:
        session = PullSession(namesrv_addrs, timeout_ms, security)
        with _lock:
            session = _pullers.setdefault(key, session)
    return session


def producer_session(
    namesrv_addrs: list[str], group: str, timeout_ms: int, security: Security | None = None
) -> ProducerSession:
    """This process's producer for ``(namesrv_addrs, group, security)`` (created on first use)."""
    _process_loop()
    key = (";".join(namesrv_addrs), group, timeout_ms, security)
    with _lock:
        session = _producers.get(key)
    if session is None:
        session = ProducerSession(namesrv_addrs, group, timeout_ms, security)
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
