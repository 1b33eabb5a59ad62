"""Synchronous facade: the same producer and consumers for code that is not async.

Each object runs its async twin on a private event loop in a background thread (uvloop when installed) and blocks
on the result, so it works from scripts, web apps and thread pools alike. Listeners of the push consumer may be
plain functions (they run in worker threads) or ``async def`` (they run on the background loop).

    from client.sync import Producer, PushConsumer
    with Producer("group", namesrv_addr="127.0.0.1:9876") as p:
        p.send(Message("Topic", b"body"))

    consumer = PushConsumer("cg", namesrv_addr="127.0.0.1:9876")
    consumer.subscribe("Topic", "*", lambda msgs: ConsumeResult.SUCCESS)
    consumer.start(); ...; consumer.close()
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Coroutine, Iterable, Iterator, Mapping
from typing import Any, Generic, Self, TypeVar, Unpack

from client.consumer.options import PullConsumerOptions, PushConsumerOptions
from client.consumer.pull import PullConsumer as AsyncPullConsumer
from client.consumer.push import Listener
from client.consumer.push import PushConsumer as AsyncPushConsumer
from client.consumer.selector import MessageSelector
from client.direct import DirectConnections
from client.message import Message, MessageQueue
from client.producer.options import ProducerOptions
from client.producer.producer import DirectSend
from client.producer.producer import Producer as AsyncProducer
from client.results import LocalTransactionState, PullResult, SendResult
from protocol.errors import RequestTimeoutError
from protocol.message_ext import MessageExt
from runtime.tasks import ignore_failure, stop_tasks

T = TypeVar("T")
A = TypeVar("A", AsyncProducer, AsyncPushConsumer, AsyncPullConsumer)  # the async twin a facade drives


def _new_loop() -> asyncio.AbstractEventLoop:
    try:
        import uvloop
    except ImportError:
        return asyncio.new_event_loop()
    return uvloop.new_event_loop()


class _LoopThread:
    """An event loop running in a daemon thread; ``run`` blocks the caller on a coroutine."""

    def __init__(self, name: str) -> None:
        self.loop = _new_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name=name, daemon=True)
        self._thread.start()

    def run(self, coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        if threading.current_thread() is self._thread:
            coro.close()
            raise RuntimeError("a sync client method was called from its own event loop thread; use the async API")
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def stop(self) -> None:
        if self.loop.is_closed():
            return

        async def shutdown() -> None:
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            await stop_tasks(*tasks, on_error=ignore_failure)
            await self.loop.shutdown_default_executor()

        asyncio.run_coroutine_threadsafe(shutdown(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(5)
        self.loop.close()


class _Facade(Generic[A]):
    """A sync object around its async twin ``aio``, built on (and driven through) a private background loop."""

    def __init__(
        self, name: str, cls: type[A], group: str, namesrv_addr: str | None, options: Mapping[str, Any]
    ) -> None:
        self._lt = _LoopThread(name)
        self.aio: A = self._run(self._build(cls, group, namesrv_addr, **options))

    def _run(self, coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        return self._lt.run(coro, timeout)

    @staticmethod
    async def _build(cls: type[T], *args: Any, **kwargs: Any) -> T:
        return cls(*args, **kwargs)  # asyncio objects are created on the loop that will use them

    def start(self) -> None:
        self._run(self.aio.start())

    def close(self) -> None:
        try:
            self._run(self.aio.close())
        finally:
            self._lt.stop()

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Producer(_Facade[AsyncProducer]):
    """``client.Producer`` for synchronous code (same options).

    A plain ``send(msg)`` or ``send_batch(msgs)`` to a topic whose route is cached is written and answered on the
    calling thread's own blocking connection (``client.direct``), skipping the hand-off to the background loop;
    everything else, and any send that does not end in a result there, goes through the async producer on the
    loop."""

    def __init__(self, group: str, namesrv_addr: str | None = None, **options: Unpack[ProducerOptions]) -> None:
        super().__init__(f"rocketq-producer-{group}", AsyncProducer, group, namesrv_addr, options)
        self._direct = DirectConnections()

    def send(self, msg: Message, **kwargs: Any) -> SendResult:
        """See ``client.Producer.send`` (``queue=``, ``selector=``/``arg=``, ``sharding_key=``, ``timeout=``)."""
        if kwargs:
            return self._run(self.aio.send(msg, **kwargs))
        # read from this thread: the route and queue caches the loop fills (dict reads, atomic under the GIL)
        d = self.aio.direct_request(msg)
        return self._run(self.aio.send(msg)) if d is None else self._send_direct(d)

    def _send_direct(self, d: DirectSend) -> SendResult:
        timeout = self.aio.config.send_timeout_ms / 1000
        started = time.monotonic()
        try:
            result = self.aio.direct_result(d, self._direct.request(d.addr, d.request, timeout))
        except OSError:  # connection refused or lost, timed out: the async path retries
            result = None
        if result is not None:
            return result
        left = timeout - (time.monotonic() - started)
        if left <= 0:
            raise RequestTimeoutError(f"send to topic {d.topic} timed out after {timeout:.1f}s")
        return self._run(self.aio.send_direct_again(d, left))

    def close(self) -> None:
        self._direct.close()
        super().close()

    def request(self, msg: Message, timeout: float = 3.0, **kwargs: Any) -> MessageExt:
        """See ``client.Producer.request``: send ``msg`` and wait for its reply (request-reply)."""
        return self._run(self.aio.request(msg, timeout, **kwargs))

    def send_oneway(self, msg: Message, *, queue: MessageQueue | None = None) -> None:
        self._run(self.aio.send_oneway(msg, queue=queue))

    def send_batch(self, msgs: list[Message], *, queue: MessageQueue | None = None) -> SendResult:
        """See ``client.Producer.send_batch``; without ``queue`` it takes the direct path as ``send`` does."""
        if queue is not None:
            return self._run(self.aio.send_batch(msgs, queue=queue))
        d = self.aio.direct_batch_request(msgs)
        return self._run(self.aio.send_batch(msgs)) if d is None else self._send_direct(d)

    def send_orderly(self, msg: Message, sharding_key: object) -> SendResult:
        return self._run(self.aio.send_orderly(msg, sharding_key))

    def send_message_in_transaction(
        self, msg: Message, local_transaction: Any, arg: Any = None
    ) -> tuple[SendResult, LocalTransactionState]:
        return self._run(self.aio.send_message_in_transaction(msg, local_transaction, arg))


class PushConsumer(_Facade[AsyncPushConsumer]):
    """``client.PushConsumer`` for synchronous code; plain-function listeners run in worker threads."""

    def __init__(self, group: str, namesrv_addr: str | None = None, **options: Unpack[PushConsumerOptions]) -> None:
        super().__init__(f"rocketq-push-{group}", AsyncPushConsumer, group, namesrv_addr, options)

    def subscribe(self, topic: str, expression: str | MessageSelector = "*", listener: Listener | None = None) -> None:
        async def do() -> None:  # on the loop: a running consumer re-heartbeats and rebalances from there
            self.aio.subscribe(topic, expression, listener)

        self._run(do())

    def register_listener(self, listener: Listener) -> None:
        self.aio.register_listener(listener)

    @property
    def assignment(self) -> list[MessageQueue]:
        return self.aio.assignment


class PullConsumer(_Facade[AsyncPullConsumer]):
    """``client.PullConsumer`` for synchronous code."""

    def __init__(self, group: str, namesrv_addr: str | None = None, **options: Unpack[PullConsumerOptions]) -> None:
        super().__init__(f"rocketq-pull-{group}", AsyncPullConsumer, group, namesrv_addr, options)

    def subscribe(self, topic: str, expression: str | MessageSelector = "*") -> None:
        async def do() -> None:
            self.aio.subscribe(topic, expression)

        self._run(do())

    def assign(self, queues: Iterable[MessageQueue], expression: str | MessageSelector = "*") -> None:
        async def do() -> None:
            self.aio.assign(queues, expression)

        self._run(do())

    @property
    def assignment(self) -> list[MessageQueue]:
        return self.aio.assignment

    def fetch_subscribe_queues(self, topic: str) -> list[MessageQueue]:
        return self._run(self.aio.fetch_subscribe_queues(topic))

    def seek(self, mq: MessageQueue, offset: int) -> None:
        self._run(self.aio.seek(mq, offset))

    def position(self, mq: MessageQueue) -> int:
        return self._run(self.aio.position(mq))

    def committed(self, mq: MessageQueue) -> int | None:
        return self._run(self.aio.committed(mq))

    def poll(self, timeout: float = 1.0, max_records: int | None = None) -> list[MessageExt]:
        return self._run(self.aio.poll(timeout, max_records))

    def __iter__(self) -> Iterator[MessageExt]:
        while True:
            yield from self.poll()

    def pull(self, mq: MessageQueue, offset: int, max_nums: int = 32, expression: str = "*") -> PullResult:
        return self._run(self.aio.pull(mq, offset, max_nums, expression))

    def commit(self, offsets: dict[MessageQueue, int] | None = None) -> None:
        self._run(self.aio.commit(offsets))


# the names used before the facade mirrored the async ones
SyncProducer = Producer
SyncPushConsumer = PushConsumer
SyncPullConsumer = PullConsumer
