"""ListenerRunner: how a push consumer calls its listeners. The listener of a batch is the one subscribed for its
topic (else the default one); an ``async def`` listener runs on the loop, a plain function in a pool of
``consume_thread_max`` threads of its own (so a slow listener neither waits for nor starves the loop's default
executor). With a namespace the listener sees topics without it. ``invoke`` turns the answer into a
``ConsumeResult``: a listener that raises, returns None or something unknown means RECONSUME_LATER (logged)."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from client._log import get_logger
from client.namespace import topics_unwrapped
from client.results import ConsumeResult
from protocol.message_ext import MessageExt
from protocol.namespace import wrap

_log = get_logger("rocketq.client.push")

Listener = Callable[[list[MessageExt]], ConsumeResult | Awaitable[ConsumeResult]]


def is_async(fn: Callable[..., Any]) -> bool:
    """``async def`` functions, partials of them, and objects with an ``async def __call__``."""
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(type(fn).__call__)


class ListenerRunner:
    def __init__(
        self,
        group: str,
        namespace: str,
        subs: Mapping[str, tuple[object, Listener | None]],
        default: Callable[[], Listener | None],
        threads: int,
    ) -> None:
        self._group = group
        self._namespace = namespace
        self._subs = subs  # the consumer's own table (topic in the namespace → (selector, listener))
        self._default = default
        self._threads = threads
        self._pool: ThreadPoolExecutor | None = None
        self._async_listener: tuple[object, bool] = (None, False)  # the last listener looked at, and is_async of it

    def listener_for(self, msgs: list[MessageExt]) -> Listener:
        sub = self._subs.get(wrap(self._namespace, msgs[0].topic))
        listener = sub[1] if sub is not None and sub[1] is not None else self._default()
        assert listener is not None
        return listener

    async def call(self, msgs: list[MessageExt]) -> object:
        """The listener's raw answer for ``msgs``; raises what the listener raised."""
        if not self._namespace:
            return await self._run(msgs)
        with topics_unwrapped(self._namespace, msgs):
            return await self._run(msgs)

    async def _run(self, msgs: list[MessageExt]) -> object:
        listener = self.listener_for(msgs)
        seen, asynchronous = self._async_listener
        if seen is not listener:  # inspect costs microseconds: once per listener, not once per call
            asynchronous = is_async(listener)
            self._async_listener = (listener, asynchronous)
        if asynchronous:
            return await listener(msgs)  # type: ignore[misc]
        result = await asyncio.get_running_loop().run_in_executor(self._listener_pool(), listener, msgs)
        if inspect.isawaitable(result):
            result = await result
        return result

    async def invoke(self, msgs: list[MessageExt]) -> ConsumeResult:
        try:
            if self._namespace:
                result = await self.call(msgs)
            else:  # ``call`` and ``_run`` inlined for an ``async def`` listener: two coroutine frames fewer per call
                listener = self.listener_for(msgs)
                seen, asynchronous = self._async_listener
                if seen is listener and asynchronous:
                    result = await listener(msgs)  # type: ignore[misc]
                else:
                    result = await self._run(msgs)
        except Exception as exc:
            _log.warning(
                "listener raised; the messages will be retried", group=self._group, error=repr(exc), exc_info=exc
            )
            return ConsumeResult.RECONSUME_LATER
        if isinstance(result, ConsumeResult):
            return result
        if result is None:
            _log.warning("listener returned None; treated as RECONSUME_LATER", group=self._group)
            return ConsumeResult.RECONSUME_LATER
        try:
            return ConsumeResult(str(result))
        except ValueError:
            _log.warning("listener returned an unknown result; treated as RECONSUME_LATER", result=repr(result))
            return ConsumeResult.RECONSUME_LATER

    def _listener_pool(self) -> ThreadPoolExecutor:
        if self._pool is None:
            self._pool = ThreadPoolExecutor(self._threads, thread_name_prefix=f"consume-{self._group}")
        return self._pool

    def close(self) -> None:
        """Drop the thread pool; calls still running finish on their own."""
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None
