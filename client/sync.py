"""Synchronous facade: the same producer and consumers for code that is not async.

Each object runs its async twin on an event loop in a background thread (one loop per facade object) and blocks on
the result, so it works from scripts, web apps and Spark executors alike. Push listeners are plain functions and
run in worker threads.

    with SyncProducer("group", namesrv_addr="127.0.0.1:9876") as p:
        p.send(Message("Topic", b"body"))
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

from client.consumer.pull import PullConsumer
from client.consumer.push import Listener, PushConsumer
from client.message import Message, MessageQueue
from client.producer.producer import Producer
from client.results import PullResult, SendResult
from protocol.message import MessageExt

T = TypeVar("T")


class _LoopThread:
    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name="rocketq-sync", daemon=True)
        self._thread.start()

    def run(self, coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(5)
        self.loop.close()


class SyncProducer:
    def __init__(self, group: str, namesrv_addr: str | None = None, **kwargs: Any) -> None:
        self._lt = _LoopThread()
        self._p: Producer = self._lt.run(self._make(group, namesrv_addr, kwargs))

    @staticmethod
    async def _make(group: str, ns: str | None, kwargs: dict[str, Any]) -> Producer:
        return Producer(group, ns, **kwargs)

    def start(self) -> None:
        self._lt.run(self._p.start())

    def send(self, msg: Message, **kwargs: Any) -> SendResult:
        return self._lt.run(self._p.send(msg, **kwargs))

    def send_oneway(self, msg: Message) -> None:
        self._lt.run(self._p.send_oneway(msg))

    def send_batch(self, msgs: list[Message]) -> SendResult:
        return self._lt.run(self._p.send_batch(msgs))

    def send_orderly(self, msg: Message, sharding_key: object) -> SendResult:
        return self._lt.run(self._p.send_orderly(msg, sharding_key))

    def close(self) -> None:
        self._lt.run(self._p.close())
        self._lt.stop()

    def __enter__(self) -> SyncProducer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class SyncPushConsumer:
    def __init__(self, group: str, namesrv_addr: str | None = None, **kwargs: Any) -> None:
        self._lt = _LoopThread()
        self._c: PushConsumer = self._lt.run(self._make(group, namesrv_addr, kwargs))

    @staticmethod
    async def _make(group: str, ns: str | None, kwargs: dict[str, Any]) -> PushConsumer:
        return PushConsumer(group, ns, **kwargs)

    def subscribe(self, topic: str, expression: str = "*", listener: Listener | None = None) -> None:
        self._c.subscribe(topic, expression, listener)

    def start(self) -> None:
        self._lt.run(self._c.start())

    def close(self) -> None:
        self._lt.run(self._c.close())
        self._lt.stop()

    def __enter__(self) -> SyncPushConsumer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class SyncPullConsumer:
    def __init__(self, group: str, namesrv_addr: str | None = None, **kwargs: Any) -> None:
        self._lt = _LoopThread()
        self._c: PullConsumer = self._lt.run(self._make(group, namesrv_addr, kwargs))

    @staticmethod
    async def _make(group: str, ns: str | None, kwargs: dict[str, Any]) -> PullConsumer:
        return PullConsumer(group, ns, **kwargs)

    def start(self) -> None:
        self._lt.run(self._c.start())

    def subscribe(self, topic: str, expression: str = "*") -> list[MessageQueue]:
        return self._lt.run(self._c.subscribe(topic, expression))

    def assign(self, queues: list[MessageQueue]) -> None:
        self._c.assign(queues)

    def seek(self, mq: MessageQueue, offset: int) -> None:
        self._lt.run(self._c.seek(mq, offset))

    def poll(self, timeout: float = 1.0) -> list[MessageExt]:
        return self._lt.run(self._c.poll(timeout))

    def pull(self, mq: MessageQueue, offset: int, max_nums: int = 32) -> PullResult:
        return self._lt.run(self._c.pull(mq, offset, max_nums))

    def commit(self, offsets: dict[MessageQueue, int] | None = None) -> None:
        self._lt.run(self._c.commit(offsets))

    def close(self) -> None:
        self._lt.run(self._c.close())
        self._lt.stop()

    def __enter__(self) -> SyncPullConsumer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


Producer_ = SyncProducer
PushConsumer_ = SyncPushConsumer
PullConsumer_ = SyncPullConsumer
