"""RemotingConnection: one TCP connection speaking the remoting protocol, in either direction.

The same class serves accepted and dialled sockets: RocketMQ traffic is symmetric (a broker sends a client requests
over the client's own connection: NOTIFY_CONSUMER_IDS_CHANGED, CHECK_TRANSACTION_STATE, GET_CONSUMER_RUNNING_INFO).

Invariants:

* The ``asyncio.BufferedProtocol`` callbacks own the socket: the transport receives straight into the
  ``FrameDecoder``'s buffer (a large frame into one sized for it), which does all parsing (sans-IO).
* Responses are matched to requests by ``opaque`` through ``_pending`` (future and deadline); replies may arrive in
  any order. Request timeouts are one sweep timer per connection (J's ``scanResponseTable``), armed at the
  earliest deadline only when a request's deadline falls before it, not a timer handle per request: a stream of
  requests with one timeout re-arms it once per timeout period.
* An incoming request's handler runs inline, inside the read callback, until it first suspends: one that answers
  without suspending (most sends, pulls that find messages, offset and heartbeat requests) costs no Task, and its
  reply joins the read's single write; one that suspends (a send awaiting a replica's ack or its new topic's
  registration, a relayed call) then becomes a Task, never delaying later requests. A ``DeferredReply`` returned
  without suspending (a SYNC_FLUSH send, a held pull) counts as in flight until resolved; its reply is written from
  there (no Task, no wakeup): those resolved in one pass leave in one write, the last one awaited at once, one
  resolved after the close is dropped. ``inline=False`` (the client side, whose handlers call application code)
  gives every request a Task from the start. Replies written outside a read are coalesced and flushed on the next
  loop pass, except a held pull's (``ctx.long_polling``: a message someone waits for) and a request sent with
  ``invoke(now=True)`` (a consumer's pull), which leave at once.
* Coalescing has a cap when the connection is made with ``burst=N`` (the client side: N = ``CLIENT_BURST``): the
  frames of one pass leave N at a time, so the peer starts on the first N while this side still encodes the rest
  (32 sends: the broker appends and syncs the first while the client builds the others, instead of taking turns).
* More than ``max_in_flight`` unanswered requests from one peer pause reading from that socket (back-pressure)
  until the count drops; a paused transport write side makes writers await ``drain()``.
* The server-wide cap on bytes held for incomplete frames is ``pending_budget.PendingBudget``; a handler that
  suspends after running inline continues as a ``resumed.ResumedHandler`` Task.
* A protocol error closes only this connection; closing fails every pending request with ``ConnectionClosedError``
  and runs the close callbacks exactly once.
* ``last_activity`` is the loop time of the last byte read or frame written; ``partial_since`` the loop time at which
  the bytes of a frame that is still incomplete began to wait (None when no partial frame is buffered, and while
  back-pressure holds complete frames). The server's sweep closes a connection on either deadline
  (``check_deadlines``); nothing here runs an idle or frame timer per connection.
* Header type negotiation (``protocol.header_codec``): a request built as msgpack leaves as JSON with the ask until a
  reply on this connection carried the offer (``peer_msgpack``); a server side offers in its reply to the first ask.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable, Coroutine
from typing import Any

import structlog

from protocol.codes import RPC_ONEWAY, RPC_TYPE_RESPONSE, LanguageCode, ResponseCode, SerializeType
from protocol.command import RemotingCommand, next_opaque
from protocol.errors import ConnectionClosedError, ProtocolError, RequestTimeoutError
from protocol.frame import MAX_FRAME, FrameDecoder, encode_frame_parts
from protocol.header_codec import MSGPACK_OFFER_FIELD, ask_msgpack
from protocol.remoting.handler import (
    Channel,
    ChannelState,
    DeferredReply,
    Handler,
    HandlerError,
    HandlerRegistry,
    RequestContext,
)
from protocol.remoting.pending_budget import PendingBudget
from protocol.remoting.resumed import ResumedHandler
from protocol.remoting.rpc_stats import RESULT_FAILED, RESULT_ONEWAY, RESULT_SUCCESS, RESULT_WRITE_FAILED
from protocol.remoting.serve import finish_request
from protocol.remoting.transport import Transport, format_peer

# (request code, response code, is_long_polling, result, seconds from the read to the reply's write)
RequestObserver = Callable[[int, int, bool, str, float], None]

_MSGPACK = SerializeType.MSGPACK


_conn_ids = itertools.count(1)
_log = structlog.get_logger("rocketq.remoting")

DEFAULT_MAX_IN_FLIGHT = 1024
CLIENT_BURST = 8  # a client's frames leave in writes of at most this many (see the module invariants)


class _Expired(Exception):
    pass


class RemotingConnection(ChannelState, asyncio.BufferedProtocol):
    def __init__(
        self,
        registry: HandlerRegistry | None,
        *,
        max_frame: int = MAX_FRAME,
        max_in_flight: int = DEFAULT_MAX_IN_FLIGHT,
        on_close: Callable[[RemotingConnection], None] | None = None,
        role: str = "server",
        observer: RequestObserver | None = None,
        request_hook: Callable[[Channel, RemotingCommand], RemotingCommand | None] | None = None,
        budget: PendingBudget | None = None,
        inline: bool = True,
        burst: int = 0,
        offer_msgpack: bool = False,
    ) -> None:
        self._registry = registry
        self._burst = burst or 1 << 30  # frames waiting that make a write at once (0: the pass's end only)
        self._run_inline = inline
        self._observer = observer
        self._hook = request_hook  # runs before dispatch (ACL); None costs one test per request
        self._budget = budget
        self.charged = 0  # bytes of this connection's decoder counted in the budget
        self._decoder = FrameDecoder(max_frame)
        self._max_frame = max_frame
        self._max_in_flight = max_in_flight
        self._transport: Transport | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._out: list[bytes] = []  # encoded frame parts not yet handed to the transport (one write per loop pass)
        self._queued = 0  # frames in _out (a large body is a part of its own: parts may outnumber frames)
        self._in_read = False
        # opaque -> (reply future, loop-time deadline) of our requests awaiting a reply
        self._pending: dict[int, tuple[asyncio.Future[RemotingCommand], float]] = {}
        self._sweep: asyncio.TimerHandle | None = None  # expires overdue requests; armed while any may be pending
        self._sweep_at = 0.0  # loop time the armed sweep fires
        self._tasks: set[asyncio.Task[None]] = set()
        self._deferred = 0  # requests answered by a DeferredReply not yet resolved
        self._deferred_idle: asyncio.Future[None] | None = None  # wait_idle's, while _deferred > 0
        self._close_callbacks: list[Callable[[Channel], None]] = []
        if on_close is not None:
            self._close_callbacks.append(on_close)  # type: ignore[arg-type]
        self._closed = False
        self._read_paused = False
        self._write_paused = False
        self._drain_waiter: asyncio.Future[None] | None = None
        self._peer = "?"
        self._conn_id = next(_conn_ids)
        self._language = LanguageCode.OTHER
        self._role = role
        self._offered = not offer_msgpack  # msgpack offered to the peer (a server's, once, answering the first ask)
        self.peer_msgpack = False  # the peer offered msgpack: requests built as msgpack may leave as msgpack
        self.log: Any = _log
        self.close_reason: str | None = None
        self.closed_event = asyncio.Event()
        self.last_activity = 0.0
        self.partial_since: float | None = None
        self._read_at = 0.0  # loop time of the read that delivered the frames being dispatched

    # -- Channel surface -------------------------------------------------------------------------------------

    @property
    def in_flight(self) -> int:
        """Requests from the peer whose handler has not finished (handlers that never suspended do not count)."""
        return len(self._tasks) + self._deferred

    @property
    def reading_paused(self) -> bool:
        """True while back-pressure has paused reading from the socket (``in_flight`` hit ``max_in_flight``)."""
        return self._read_paused

    def close(self, reason: str = "closed locally") -> None:
        if self._transport is not None and not self._closed:
            self.close_reason = self.close_reason or reason
            self._flush()
            self._transport.close()

    def abort(self, reason: str) -> None:
        if self._transport is not None and not self._closed:
            self.close_reason = self.close_reason or reason
            self._out.clear()
            self._queued = 0
            self._transport.abort()

    async def invoke(self, cmd: RemotingCommand, timeout: float, *, now: bool = False) -> RemotingCommand:
        """Send ``cmd`` and await its reply. ``now``: write it at once rather than with the loop pass's other frames
        (a consumer's pull, sent while the replies that came with the last one are still being processed: the
        broker works on it meanwhile)."""
        if self._closed:
            raise ConnectionClosedError(f"connection to {self._peer} is closed")
        if cmd.opaque == 0:
            cmd.opaque = next_opaque()
        loop = self._loop or asyncio.get_running_loop()
        fut: asyncio.Future[RemotingCommand] = loop.create_future()
        opaque = cmd.opaque
        deadline = loop.time() + timeout
        self._pending[opaque] = (fut, deadline)
        if self._sweep is None or deadline < self._sweep_at:
            self._arm_sweep(loop, deadline)
        if cmd.serialize_type == _MSGPACK and not self.peer_msgpack:
            ask_msgpack(cmd)
        try:
            if self._write_paused:
                await self.drain()
            self._write(cmd, now or len(self._pending) == 1)
            return await fut
        except _Expired:
            raise RequestTimeoutError(
                f"wait response on {self._peer} timeout {int(timeout * 1000)}ms, code {cmd.code}"
            ) from None
        finally:
            self._pending.pop(opaque, None)

    def _arm_sweep(self, loop: asyncio.AbstractEventLoop, when: float) -> None:
        if self._sweep is not None:
            self._sweep.cancel()
        self._sweep_at = when
        self._sweep = loop.call_at(when, self._expire_overdue)

    def _expire_overdue(self) -> None:
        """The sweep: fail every request past its deadline, re-arm at the earliest deadline still pending."""
        self._sweep = None
        loop = self._loop
        if loop is None or not self._pending:
            return
        now = loop.time()
        earliest = float("inf")
        for fut, deadline in self._pending.values():
            if deadline <= now:
                if not fut.done():
                    fut.set_exception(_Expired())
            elif deadline < earliest:
                earliest = deadline
        if earliest != float("inf"):
            self._arm_sweep(loop, earliest)

    def invoke_oneway(self, cmd: RemotingCommand) -> None:
        if self._closed:
            raise ConnectionClosedError(f"connection to {self._peer} is closed")
        if cmd.opaque == 0:
            cmd.opaque = next_opaque()
        cmd.flag |= RPC_ONEWAY
        if cmd.serialize_type == _MSGPACK and not self.peer_msgpack:
            ask_msgpack(cmd)
        self._write(cmd)

    async def drain(self) -> None:
        if self._closed:
            raise ConnectionClosedError(f"connection to {self._peer} is closed")
        if not self._write_paused:
            return
        if self._drain_waiter is None or self._drain_waiter.done():
            self._drain_waiter = asyncio.get_running_loop().create_future()
        await self._drain_waiter

    # -- asyncio.BufferedProtocol -----------------------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = transport  # type: ignore[assignment]  # a BaseTransport the loop made for a stream
        self._loop = asyncio.get_running_loop()
        self._peer = format_peer(transport.get_extra_info("peername"))
        self.log = _log.bind(peer=self._peer, conn_id=self._conn_id, role=self._role)
        self.last_activity = self._loop.time()

    def get_buffer(self, sizehint: int) -> memoryview:
        return self._decoder.get_buffer()

    def buffer_updated(self, nbytes: int) -> None:
        self._decoder.buffer_updated(nbytes)
        self._received()

    def data_received(self, data: bytes) -> None:
        """Bytes handed in whole (a caller driving the protocol by hand; transports use ``get_buffer``)."""
        self._decoder.feed(data)
        self._received()

    def _received(self) -> None:
        now = self.last_activity = self._read_at = self._loop.time() if self._loop is not None else 0.0
        # Replies written while these frames are dispatched leave in one transport write at the end.
        self._in_read = True
        try:
            self._drain_frames()
        finally:
            self._in_read = False
            if self._out:
                self._flush()
        self._track_partial(now)
        if self._budget is not None and self._decoder.reserved != self.charged:
            self._budget.charge(self, self._decoder.reserved)

    def _track_partial(self, now: float) -> None:
        """Keep ``partial_since`` (see the module invariants) after a read or a resume."""
        if self._decoder.buffered and not self._read_paused:
            if self.partial_since is None:
                self.partial_since = now
        else:
            self.partial_since = None

    def check_deadlines(self, now: float, idle_s: float, frame_s: float) -> None:
        """Close this connection when a frame has been incomplete for ``frame_s`` seconds (a peer trickling bytes)
        or nothing was read or written for ``idle_s`` seconds while no request of the peer is in flight (J's
        ``serverChannelMaxIdleTimeSeconds``). A deadline of 0 is off."""
        if self._closed:
            return
        if frame_s > 0 and self.partial_since is not None and now - self.partial_since >= frame_s:
            self.log.warning("frame not completed in time, closing connection", deadline_s=frame_s)
            self.abort(f"frame not completed within {frame_s:g}s")
        elif idle_s > 0 and not self.in_flight and not self._pending and now - self.last_activity >= idle_s:
            self.log.info("idle connection closed", idle_s=idle_s)
            self.close(f"idle for {idle_s:g}s")

    def _drain_frames(self) -> None:
        """Dispatch buffered frames; stops (leaving the rest buffered) while the in-flight limit is reached."""
        decoder = self._decoder
        while not self._closed:
            if self.in_flight >= self._max_in_flight:
                self._pause()
                return
            try:
                cmd = decoder.next_frame()
            except ProtocolError as exc:
                self.log.warning("bad frame, closing connection", reason=str(exc))
                self._flush()  # replies to the good frames before it still go out
                self.abort(f"protocol error: {exc}")
                return
            except Exception as exc:  # a decoder bug must cost this connection only, never the reading loop
                self.log.exception("frame decoder failed, closing connection")
                self.abort(f"decoder failure: {type(exc).__name__}: {exc}")
                return
            if cmd is None:
                return
            if cmd.flag & RPC_TYPE_RESPONSE:
                if not self.peer_msgpack and MSGPACK_OFFER_FIELD in cmd.ext_fields:
                    self.peer_msgpack = True
                entry = self._pending.pop(cmd.opaque, None)
                if entry is not None and not entry[0].done():
                    entry[0].set_result(cmd)
                continue
            self._language = cmd.language
            self._dispatch(cmd)

    def _pause(self) -> None:
        if not self._read_paused and self._transport is not None:
            self._read_paused = True
            self._transport.pause_reading()

    def connection_lost(self, exc: Exception | None) -> None:
        self._closed = True
        self._out.clear()
        self._queued = 0
        if self._budget is not None:
            self._budget.charge(self, 0)
        self._decoder.discard()
        if self.close_reason is None:
            self.close_reason = f"peer closed: {exc}" if exc else "peer closed"
        pending, self._pending = self._pending, {}
        if self._sweep is not None:
            self._sweep.cancel()
            self._sweep = None
        for fut, _ in pending.values():
            if not fut.done():
                fut.set_exception(ConnectionClosedError(f"connection to {self._peer} closed: {self.close_reason}"))
        if self._drain_waiter is not None and not self._drain_waiter.done():
            self._drain_waiter.set_exception(ConnectionClosedError(f"connection to {self._peer} closed"))
            self._drain_waiter.exception()  # mark retrieved
        self._run_close_callbacks(self.log)
        self.closed_event.set()

    def pause_writing(self) -> None:
        self._write_paused = True

    def resume_writing(self) -> None:
        self._write_paused = False
        if self._drain_waiter is not None and not self._drain_waiter.done():
            self._drain_waiter.set_result(None)

    # -- request dispatch ------------------------------------------------------------------------------------

    def _dispatch(self, cmd: RemotingCommand) -> None:
        # The handler's first step runs here, inside data_received (the module invariants): a reply without a
        # suspension joins this read's write; one that suspends is awaited by ``finish_request`` (serve.py,
        # interpreted) in a Task (``ResumedHandler``). Before it suspends a handler has no current Task.
        try:
            self._serve_inline(cmd)
        except Exception:  # a bug in routing or answering (handler errors are mapped): it costs this request only
            self.log.exception("request dispatch failed", code=cmd.code, opaque=cmd.opaque)

    def _serve_inline(self, cmd: RemotingCommand) -> None:
        received_at = self._read_at
        registry = self._registry  # the common case (no ACL hook, a handler for the code): one dict read, no call
        handler = registry.handlers.get(cmd.code) if self._hook is None and registry is not None else None
        if handler is None:  # the ACL hook, or an unsupported code
            handler, routed = self.route(cmd)
            if handler is None:
                if self.finish(cmd, received_at, None, routed, RESULT_SUCCESS):
                    self._track(self._drained())
                return
        ctx = RequestContext(self, cmd, self.log, received_at)
        result = RESULT_SUCCESS
        reply: RemotingCommand | DeferredReply | None
        try:
            got = handler(ctx, cmd)  # a plain handler's reply, or the coroutine of an ``async def`` one
        except Exception as exc:
            reply, result = self.reply_error(cmd, exc)
        else:
            if got is None or isinstance(got, (RemotingCommand, DeferredReply)):
                reply = got
            elif not self._run_inline:
                self._track(finish_request(self, cmd, ctx, got))
                return
            else:
                try:
                    first = got.send(None)  # type: ignore[attr-defined]  # every awaitable handler is a coroutine
                except StopIteration as done:
                    reply = done.value
                except Exception as exc:  # a CancelledError is not one: it propagates
                    reply, result = self.reply_error(cmd, exc)
                else:  # the answering coroutine's first step only reaches the handler's suspension: a Task goes on
                    outer = finish_request(self, cmd, ctx, ResumedHandler(got, first))  # type: ignore[arg-type]
                    self._track(ResumedHandler(outer, outer.send(None)))
                    return
        if self.finish(cmd, received_at, ctx, reply, result):
            self._track(self._drained())

    def _track(self, coro: Coroutine[Any, None, None]) -> None:
        """Run ``coro`` in a Task that counts as in flight until it ends."""
        task = (self._loop or asyncio.get_running_loop()).create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._task_done)

    async def _drained(self) -> None:
        """A reply was written while the transport's writes are paused: the request stays in flight until drained."""
        try:
            await self.drain()
        except ConnectionClosedError:
            pass

    def _task_done(self, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        if self._read_paused:
            self._maybe_resume()

    def _maybe_resume(self) -> None:
        """Back-pressure off once half of ``max_in_flight`` is answered; dispatch the frames held meanwhile."""
        if self.in_flight <= self._max_in_flight // 2 and not self._closed:
            self._read_paused = False
            if self._transport is not None:
                self._transport.resume_reading()
            self._drain_frames()  # frames that arrived before the pause
            if self._loop is not None:
                self._track_partial(self._loop.time())
            if self._budget is not None and self._decoder.reserved != self.charged:
                self._budget.charge(self, self._decoder.reserved)

    def route(self, cmd: RemotingCommand) -> tuple[Handler | None, RemotingCommand | None]:
        """The handler of ``cmd``, or (None, the reply) when it gets none: the request hook (ACL) denied it, or no
        handler answers its code (REQUEST_CODE_NOT_SUPPORTED, logged rate-limited)."""
        registry = self._registry
        if self._hook is not None and (denied := self._hook(self, cmd)) is not None:
            return None, denied
        handler = registry.get(cmd.code) if registry is not None else None
        if handler is None:
            if registry is not None:
                registry.note_unsupported(cmd.code, self._peer, self.log)
            resp = cmd.make_response(ResponseCode.REQUEST_CODE_NOT_SUPPORTED, f" request type {cmd.code} not supported")
            return None, resp
        return handler, None

    def reply_error(self, cmd: RemotingCommand, exc: Exception) -> tuple[RemotingCommand, str]:
        """The reply to ``cmd`` whose handler raised ``exc`` and its RPC result: a ``HandlerError``'s code and remark,
        anything else SYSTEM_ERROR, logged with its traceback (call it in the ``except`` block)."""
        if isinstance(exc, HandlerError):
            return cmd.make_response(exc.code, exc.remark), RESULT_SUCCESS
        self.log.exception("handler failed", code=cmd.code, opaque=cmd.opaque)
        return cmd.make_response(ResponseCode.SYSTEM_ERROR, f"{type(exc).__name__}: {exc}"), RESULT_FAILED

    def finish(
        self,
        cmd: RemotingCommand,
        received_at: float,
        ctx: RequestContext | None,
        reply: RemotingCommand | DeferredReply | None,
        result: str,
    ) -> bool:
        """Answer ``cmd`` with a handler's ``reply``; a ``DeferredReply`` counts as in flight until resolved
        (``_settle`` writes it then). True when a reply was written while the transport's writes are paused: the
        caller should ``drain()``."""
        if isinstance(reply, DeferredReply):
            assert ctx is not None
            self._deferred += 1
            reply.bind(self._settle, ctx)
            return False
        return self.answer(cmd, received_at, ctx, reply, result) and self._write_paused

    def _settle(self, ctx: RequestContext, resp: RemotingCommand | None) -> None:
        """A ``DeferredReply`` resolved: write its reply (the last one this connection awaits leaves at once)."""
        self._deferred -= 1
        self.answer(ctx.cmd, ctx.received_at, ctx, resp, RESULT_SUCCESS)
        if not self._deferred:
            if self._out and not self._in_read:
                self._flush()
            idle = self._deferred_idle
            if idle is not None:
                self._deferred_idle = None
                if not idle.done():
                    idle.set_result(None)
        if self._read_paused:
            self._maybe_resume()

    def answer(
        self,
        cmd: RemotingCommand,
        received_at: float,
        ctx: RequestContext | None,
        resp: RemotingCommand | None,
        result: str,
    ) -> bool:
        """Write the reply to ``cmd`` (none for a oneway request, or when the connection closed meanwhile) and
        report it to the observer; True when a reply was written."""
        if cmd.flag & RPC_ONEWAY or resp is None or self._closed:
            if self._observer is not None:
                self._observe(cmd, received_at, ctx, resp, RESULT_WRITE_FAILED if self._closed else RESULT_ONEWAY)
            return False
        resp.opaque = cmd.opaque
        resp.flag |= RPC_TYPE_RESPONSE
        resp.serialize_type = cmd.serialize_type
        if not self._offered and cmd.remark == MSGPACK_OFFER_FIELD:
            self._offered = True
            resp.ext_fields = {**resp.ext_fields, MSGPACK_OFFER_FIELD: "true"}
        try:
            try:
                self._write(resp)
            except ProtocolError as exc:
                self.log.warning("reply does not encode", code=cmd.code, reason=str(exc))
                self._write(cmd.make_response(ResponseCode.SYSTEM_ERROR, f"reply does not encode: {exc}"))
        except ConnectionClosedError:  # closed (or closing) while the handler ran: nobody to answer
            result = RESULT_WRITE_FAILED
        else:
            if ctx is not None and ctx.long_polling and not self._in_read:
                # a held pull woken by a message: its reply goes out now, not a loop pass later (end-to-end latency)
                self._flush()
        if self._observer is not None:
            self._observe(cmd, received_at, ctx, resp, result)
        return result != RESULT_WRITE_FAILED

    def _observe(
        self,
        cmd: RemotingCommand,
        received_at: float,
        ctx: RequestContext | None,
        resp: RemotingCommand | None,
        result: str,
    ) -> None:
        """Report one served request to the observer (RPC latency metrics); called only when one is installed."""
        assert self._observer is not None
        loop = self._loop or asyncio.get_running_loop()
        code = resp.code if resp is not None else ResponseCode.SUCCESS
        long_polling = ctx.long_polling if ctx is not None else False
        self._observer(cmd.code, code, long_polling, result, loop.time() - received_at)

    def _write(self, cmd: RemotingCommand, alone: bool = False) -> None:
        transport = self._transport
        if transport is None or self._closed or transport.is_closing():
            raise ConnectionClosedError(f"connection to {self._peer} is closed")
        # Coalesce: every frame written in one loop pass goes out in a single write (a syscall per frame was a
        # fifth of the CPU of a pipelined connection), a large body as a part of its own, not copied into its frame.
        # data_received flushes itself; otherwise flush next pass, unless the caller says the frame is ``alone`` (the
        # only request in flight: nothing to coalesce with), which goes out now, without a callback and an extra loop
        # pass before it leaves.
        out = self._out
        first = not out
        encode_frame_parts(cmd, out, self._max_frame)
        self._queued += 1
        if self._queued >= self._burst:
            self._flush()
        elif first and not self._in_read and self._loop is not None:
            if alone:
                self._flush()
            else:
                self._loop.call_soon(self._flush)

    def _flush(self) -> None:
        out = self._out
        if not out:
            return
        self._out = []
        self._queued = 0
        transport = self._transport
        if transport is None or transport.is_closing():
            return  # aborted or lost meanwhile: the frames die with the connection, as unsent socket data would
        if self._loop is not None:
            self.last_activity = self._loop.time()
        if len(out) == 1:
            transport.write(out[0])
        else:
            transport.writelines(out)

    def drop_buffered(self) -> None:
        """Release the bytes of incomplete frames now (the connection is being aborted)."""
        self._decoder.discard()
        self.partial_since = None

    async def wait_idle(self) -> None:
        """Wait until no request from the peer is in flight."""
        while self._tasks or self._deferred:
            if self._tasks:
                await asyncio.wait(list(self._tasks))
                continue
            if self._deferred_idle is None:
                self._deferred_idle = asyncio.get_running_loop().create_future()
            await asyncio.shield(self._deferred_idle)

    def cancel_in_flight(self) -> None:
        for task in list(self._tasks):
            task.cancel()
