"""SEND_MESSAGE (10, long header names — C++), SEND_MESSAGE_V2 (310, one-letter names — J, ali-ons) and
SEND_BATCH_MESSAGE (320) (J ``SendMessageProcessor``): the remoting wire of ``broker.services.send``. The header
becomes one ``SendRequest``; the service's ``SendRefused`` is the reply's code and remark, its ``SendOutcome`` the
success reply. Checked here, before the service's checks (its table):

======================================================= ================= =============================================
check                                                   code              remark
======================================================= ================= =============================================
queued longer than waitTimeMillsInSendQueue (fast fail) SYSTEM_BUSY       [TIMEOUT_CLEAN_QUEUE]broker busy, start flow
                                                                          control for a while, period in queue: Nms,
                                                                          size of queue: n
======================================================= ================= =============================================

A batch is a SEND_BATCH_MESSAGE or any send whose header says ``batch=true``: J's SendMessageProcessor decides by
the header flag, and the C++ client 1.2 sends its batches as SEND_MESSAGE (10) with ``batch=true``. A negative
queueId picks a queue at random. Unknown topics are auto-created from ``defaultTopic`` (TBW102) with
min(defaultTopicQueueNums, TBW102's writeQueueNums) queues and, as J does, registered with the name servers before
the first send to them is stored and answered (``TopicConfigTable.registered``: one round for a burst of creations).
A message with property DELAY > 0 is diverted to SCHEDULE_TOPIC_XXXX queue level-1 with REAL_TOPIC/REAL_QID
(``ScheduleService``); TIMER_DELIVER_MS / TIMER_DELAY_SEC / TIMER_DELAY_MS to the timer (``TimerService``, its
refusals are its table). A SEND_MESSAGE(_V2) whose sysFlag says TRANSACTION_PREPARED is stored as a transaction half
message (the reply's ``queueId`` is the requested queue, as J answers). The UNIQ_KEY property and the compress bit
of sysFlag are stored as sent. A single message also gets properties CLUSTER, MSG_REGION and TRACE_ON
(``broker.stamp``), as RocketMQ 5 stores it. Batch messages do not, as in RocketMQ 5 (whose batch encoder writes
each message's own properties).

The queue-wait check is J's ``BrokerFastFailure``: under overload the event loop falls behind, and a send that has
waited longer than the client would still wait for is answered SYSTEM_BUSY at once, without touching the store, so
the broker sheds load instead of growing its backlog. The clients retry SYSTEM_BUSY (J, after a back-off).

The success reply (also for FLUSH_DISK_TIMEOUT, FLUSH_SLAVE_TIMEOUT, SLAVE_NOT_AVAILABLE, which clients treat as a
send with another status) carries ext ``msgId`` (offset msgId; comma-joined for a batch), ``queueId``,
``queueOffset`` (the first one for a batch), ``MSG_REGION`` and ``TRACE_ON`` — all strings.

With SYNC_FLUSH (and no SYNC_MASTER wait) a send that must wait for its fsync does not suspend: the service puts
without waiting and calls a ``_FlushedReply`` (whose ``DeferredReply`` is returned at once) when the group commit has
answered (PUT_OK, or FLUSH_DISK_TIMEOUT after ``syncFlushTimeout``); the connection writes it — no Task per send.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

from broker.handlers._common import HEADER_ERRORS, bad_header
from broker.services.send import PendingSend, SendOutcome, SendRefused, SendRequest, SendService
from protocol.bodies import TopicConfig
from protocol.codes import RequestCode, ResponseCode
from protocol.command import RemotingCommand
from protocol.headers import SEND_V1_NAMES, SEND_V2_NAMES, SendMessageRequestHeader
from protocol.remoting.handler import DeferredReply, Handler, HandlerError, RequestContext


class _FlushedReply:
    """A SYNC_FLUSH send's reply: ``reply`` (what the handler returns) is resolved with the reply built when the
    group commit answers (``flushed``). It holds its ``DeferredReply`` rather than extending it, so this module can
    be compiled (a compiled class cannot extend handler's interpreted one)."""

    def __init__(self, handlers: SendHandlers, cmd: RemotingCommand) -> None:
        self._handlers = handlers
        self._cmd = cmd
        self.reply = DeferredReply()

    def flushed(self, outcome: SendOutcome) -> None:
        cmd = self._cmd
        try:
            reply = self._handlers.reply(cmd, outcome)
        except Exception as exc:  # a bug here must still answer, or the request stays in flight
            reply = cmd.make_response(ResponseCode.SYSTEM_ERROR, f"{type(exc).__name__}: {exc}")
        self.reply.resolve(reply)


class SendHandlers:
    def __init__(
        self,
        service: SendService,
        *,
        region_id: str,
        trace_on: bool,
        max_queue_wait_ms: int = 200,
    ) -> None:
        self._svc = service
        self._max_wait_s = max_queue_wait_ms / 1000
        self._region = region_id
        self._trace_on = "true" if trace_on else "false"
        # the loop's clock, looked up on the first send (asyncio.get_running_loop() costs a getpid per call)
        self._loop_time: Callable[[], float] | None = None

    def table(self) -> dict[int, Handler]:
        return {
            RequestCode.SEND_MESSAGE: self.send,
            RequestCode.SEND_MESSAGE_V2: self.send,
            RequestCode.SEND_BATCH_MESSAGE: self.send,
        }

    def checked_topic(self, ctx: RequestContext, h: SendMessageRequestHeader) -> TopicConfig:
        """The topic's config after every check a send makes (reply sends make them too); raises HandlerError."""
        try:
            return self._svc.check(SendRequest.of_header(h, b"", ctx.conn.peer, False))
        except SendRefused as exc:
            raise HandlerError(exc.code, exc.remark) from None

    def send(
        self, ctx: RequestContext, cmd: RemotingCommand
    ) -> RemotingCommand | DeferredReply | Coroutine[Any, Any, RemotingCommand | DeferredReply]:
        """The handler of all three send codes, the header decoded once: a plain call (no middleware around it) that
        answers at once, or, for a send that must wait (a new topic's registration, a replica's ack, a half
        message), returns the coroutine that answers it: no coroutine for the common send."""
        code = cmd.code
        ext = cmd.ext_fields
        if code == RequestCode.SEND_MESSAGE_V2:
            names, batch = SEND_V2_NAMES, False
        elif code == RequestCode.SEND_MESSAGE:
            names, batch = SEND_V1_NAMES, False
        else:  # SEND_BATCH_MESSAGE, V1 or V2 names
            names, batch = (SEND_V2_NAMES if "b" in ext or "a" in ext else SEND_V1_NAMES), True
        try:  # the header read once, straight into the request: all the service gets
            req = SendRequest.of_ext_fields(ext, names, cmd.body, ctx.conn.peer, batch)
        except HEADER_ERRORS as exc:
            raise bad_header(exc) from None
        clock = self._loop_time
        if clock is None:
            clock = self._loop_time = asyncio.get_running_loop().time
        waited = clock() - ctx.received_at
        if waited > self._max_wait_s and ctx.received_at:
            raise HandlerError(
                ResponseCode.SYSTEM_BUSY,
                f"[TIMEOUT_CLEAN_QUEUE]broker busy, start flow control for a while, period in queue: "
                f"{int(waited * 1000)}ms, size of queue: {ctx.conn.in_flight}",
            )
        try:
            got = self._svc.send_now(req, defer=True)  # no coroutine of the service's unless it suspends
        except SendRefused as exc:
            raise HandlerError(exc.code, exc.remark) from None
        if isinstance(got, SendOutcome):
            return self.reply(cmd, got)
        if isinstance(got, PendingSend):
            return self._deferred(cmd, got)
        return self._finished(cmd, got)

    async def _finished(
        self, cmd: RemotingCommand, pending: Coroutine[Any, Any, SendOutcome | PendingSend]
    ) -> RemotingCommand | DeferredReply:
        """The reply of a send whose store call suspends."""
        try:
            outcome = await pending
        except SendRefused as exc:
            raise HandlerError(exc.code, exc.remark) from None
        if isinstance(outcome, PendingSend):
            return self._deferred(cmd, outcome)
        return self.reply(cmd, outcome)

    def _deferred(self, cmd: RemotingCommand, pending: PendingSend) -> DeferredReply:
        """The reply of a send the group commit answers (SYNC_FLUSH)."""
        deferred = _FlushedReply(self, cmd)
        pending.then(deferred.flushed)
        return deferred.reply

    def reply(self, cmd: RemotingCommand, outcome: SendOutcome) -> RemotingCommand:
        """The success reply (also for FLUSH_DISK_TIMEOUT, FLUSH_SLAVE_TIMEOUT, SLAVE_NOT_AVAILABLE)."""
        result = outcome.result
        ext = {
            "msgId": result.msg_ids(),
            "queueId": str(outcome.queue_id),
            "queueOffset": str(result.first().queue_offset),
            "MSG_REGION": self._region,
            "TRACE_ON": self._trace_on,
        }
        return cmd.make_response(outcome.code, None, ext)
