"""Message traces written by the SDK (``enable_trace=True`` on a producer or push consumer), in the Java client's
format (``protocol.trace``) so the Dashboard and ``mqadmin queryMsgTraceById`` read them.

* A producer records one ``Pub`` per ``send`` that got a reply from a broker with ``TRACE_ON`` (batches, oneway sends
  and failed sends are not traced, as in J); a push consumer one ``SubBefore`` per message before its listener runs
  and one ``SubAfter`` after (same requestId; costTime = the batch's time / its size; contextCode from the result).
  Names are recorded without the namespace, as J's hooks do; messages with ``TRACE_ON=false`` are skipped.
* ``TraceDispatcher`` keeps records off the hot path: ``append`` only adds them to a bounded buffer
  (``capacity`` 2048 records; when full the new records are dropped and counted in ``dropped``, never blocking a
  send or a listener) and wakes a background task, which sends them every ``interval`` (0.1 s) or as soon as
  ``batch_size`` (100) are waiting — records of one traced topic together, as messages of at most ``max_msg_size``
  (128000) bytes to the trace topic with KEYS = the traced msgIds and keys — through an inner producer
  (group ``_INNER_TRACE_PRODUCER-<group>-<PRODUCE|CONSUME>``, not heartbeated). ``close`` sends what is left.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Protocol

from client._log import get_logger
from client.message import Message
from client.results import ConsumeResult, SendResult, SendStatus
from protocol.message_ext import MessageExt
from protocol.message_properties import PropertyKey
from protocol.msg_id import decode_offset_msg_id
from protocol.namespace import unwrap
from protocol.trace import (
    KEY_SEPARATOR,
    ConsumeReturnType,
    TraceMessageType,
    TraceRecord,
    TraceType,
    encode_record,
    trace_keys,
)
from runtime.tasks import stop_tasks

_log = get_logger("rocketq.client.trace")

INNER_TRACE_GROUP_PREFIX = "_INNER_TRACE_PRODUCER"
TRACE_SEND_TIMEOUT_S = 5.0


class TraceSender(Protocol):
    """What sends trace messages (a ``Producer``)."""

    async def send(self, msg: Message, *, timeout: float | None = None) -> SendResult: ...

    async def close(self) -> None: ...


class TraceDispatcher:
    def __init__(
        self,
        make_sender: Callable[[], Awaitable[TraceSender]],
        trace_topic: str,
        *,
        capacity: int = 2048,
        batch_size: int = 100,
        interval: float = 0.1,
        max_msg_size: int = 128_000,
    ) -> None:
        self.trace_topic = trace_topic
        self._make_sender = make_sender
        self._sender: TraceSender | None = None
        self._buf: deque[TraceRecord] = deque()
        self._capacity = capacity
        self._batch = batch_size
        self._interval = interval
        self._max_size = max_msg_size
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self.dropped = 0  # records refused because the buffer was full
        self.sent = 0  # records in trace messages the broker stored
        self.failed = 0  # records in trace messages whose send failed

    def append(self, records: list[TraceRecord]) -> None:
        """Queue ``records`` for sending; never blocks (a full buffer drops them and counts them)."""
        if len(self._buf) + len(records) > self._capacity:
            self.dropped += len(records)
            return
        self._buf.extend(records)
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run(), name=f"trace-{self.trace_topic}")
        if len(self._buf) >= self._batch:
            self._wake.set()

    async def _run(self) -> None:
        while True:
            try:
                await asyncio.wait_for(self._wake.wait(), self._interval)
            except TimeoutError:
                pass
            self._wake.clear()
            while self._buf:
                await self._flush(min(len(self._buf), self._batch))

    async def _flush(self, n: int) -> None:
        records = [self._buf.popleft() for _ in range(n)]
        by_topic: dict[str, list[TraceRecord]] = {}
        for r in records:
            by_topic.setdefault(r.topic, []).append(r)
        for group in by_topic.values():
            chunk: list[TraceRecord] = []
            body: list[str] = []
            size = 0
            for r in group:
                text = encode_record(r)
                chunk.append(r)
                body.append(text)
                size += len(text)
                if size >= self._max_size:
                    await self._send(chunk, "".join(body))
                    chunk, body, size = [], [], 0
            if chunk:
                await self._send(chunk, "".join(body))

    async def _send(self, records: list[TraceRecord], body: str) -> None:
        try:
            if self._sender is None:
                self._sender = await self._make_sender()
            msg = Message(self.trace_topic, body.encode(), keys=KEY_SEPARATOR.join(trace_keys(records)))
            await self._sender.send(msg, timeout=TRACE_SEND_TIMEOUT_S)
        except Exception as exc:
            self.failed += len(records)
            _log.warning("trace data not sent", trace_topic=self.trace_topic, records=len(records), error=str(exc))
            return
        self.sent += len(records)

    async def close(self) -> None:
        """Stop the background task and send what is still buffered (failures are logged, not raised)."""
        task, self._task = self._task, None
        await stop_tasks(task)
        while self._buf:
            await self._flush(min(len(self._buf), self._batch))
        if self._sender is not None:
            await self._sender.close()
            self._sender = None


def _msg_type(props: dict[str, str]) -> TraceMessageType:
    if props.get(PropertyKey.TRANSACTION_PREPARED) == "true":
        return TraceMessageType.TRANS_HALF
    if props.get(PropertyKey.DELAY, "0") not in ("", "0"):
        return TraceMessageType.DELAY
    return TraceMessageType.NORMAL


def pub_record(group: str, msg: Message, body_length: int, result: SendResult, started_ms: int) -> TraceRecord:
    """J ``SendMessageTraceHookImpl``: the Pub record of a send answered with ``result``."""
    props = msg.wire_properties()
    try:
        ip, port, _off = decode_offset_msg_id(result.offset_msg_id)
        store_host = f"{ip}:{port}"
    except ValueError:
        store_host = ""
    return TraceRecord(
        TraceType.PUB,
        result.msg_id,
        started_ms,
        result.region_id,
        unwrap(group),
        unwrap(msg.topic),
        msg.tags,
        props.get(PropertyKey.KEYS),
        store_host,
        body_length,
        int(time.time() * 1000) - started_ms,
        _msg_type(props),
        result.offset_msg_id,
        result.send_status is SendStatus.SEND_OK,
    )


def new_request_id() -> str:
    return uuid.uuid4().hex.upper()


def sub_before(group: str, msgs: list[MessageExt], request_id: str, now_ms: int) -> list[TraceRecord]:
    """J ``ConsumeMessageTraceHookImpl.consumeMessageBefore``: one SubBefore per message (those with
    ``TRACE_ON=false`` skipped)."""
    out: list[TraceRecord] = []
    for m in msgs:
        props = m.properties
        if props.get(PropertyKey.TRACE_ON) == "false":
            continue
        out.append(
            TraceRecord(
                TraceType.SUB_BEFORE,
                m.msg_id,
                now_ms,
                props.get(PropertyKey.MSG_REGION),  # J: null (stored messages have none)
                unwrap(group),
                unwrap(m.topic),
                m.tags,
                props.get(PropertyKey.KEYS),
                request_id=request_id,
                retry_times=m.reconsume_times,
                body_length=m.store_size,
            )
        )
    return out


def sub_after(before: list[TraceRecord], result: ConsumeResult | None, cost_ms: int, count: int) -> list[TraceRecord]:
    """J ``consumeMessageAfter``: one SubAfter per traced message; costTime is the batch's time divided by its
    size; ``result`` None means the listener raised."""
    ok = result is ConsumeResult.SUCCESS
    code = (
        ConsumeReturnType.SUCCESS if ok else ConsumeReturnType.EXCEPTION if result is None else ConsumeReturnType.FAILED
    )
    per = cost_ms // max(count, 1)
    now = int(time.time() * 1000)
    return [
        TraceRecord(
            TraceType.SUB_AFTER,
            b.msg_id,
            now,
            b.region_id,
            b.group,
            b.topic,
            b.tags,
            b.keys,
            cost_time=per,
            success=ok,
            request_id=b.request_id,
            context_code=code,
        )
        for b in before
    ]


class TracedListener:
    """Wraps a push consumer's ``invoke_listener`` with SubBefore / SubAfter records."""

    def __init__(
        self,
        invoke: Callable[[list[MessageExt]], Awaitable[ConsumeResult]],
        dispatcher: TraceDispatcher,
        group: str,
    ) -> None:
        self._invoke = invoke
        self.dispatcher = dispatcher
        self._group = group

    async def __call__(self, msgs: list[MessageExt]) -> ConsumeResult:
        started = int(time.time() * 1000)
        before = sub_before(self._group, msgs, new_request_id(), started)
        if before:
            self.dispatcher.append(before)
        result: ConsumeResult | None = None
        try:
            result = await self._invoke(msgs)
            return result
        finally:
            if before:
                self.dispatcher.append(sub_after(before, result, int(time.time() * 1000) - started, len(msgs)))
