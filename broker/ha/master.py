"""The master's side of replication: the HA listener on ``haListenPort``, one connection per slave, the SYNC_MASTER
waits, and the start-up fence that keeps a master from forking the log of a slave that is ahead of it.

Per slave connection (RocketMQ's ``HAConnection``; the byte layout is in ``broker.ha.wire``): the first 8-byte
report says where the slave's log ends. An empty slave (0) is sent everything this store still holds (J sends only
the last file; a full copy is what makes a replica worth having); any other slave is sent from its end. A writer
task streams ``HEADER`` + up to ``haTransferBatchSize`` bytes, never across a file, as soon as they are written (not
flushed), and an empty header every ``haSendHeartbeatInterval`` when idle; a reader task takes every later report as
the slave's ack. A connection silent for ``haHousekeepingInterval`` is dropped.

A slave whose first report is *beyond* this master's end holds bytes the master lacks (the master lost its disk, or
its unflushed tail). If the master is fenced — it has taken no write since it started — it asks for them
(``PULL_FROM_SLAVE``), appends them, and only then lifts the fence. If it already takes writes the two logs have
diverged: it tells the slave (``DIVERGED``), which keeps its bytes and keeps serving reads, and both log it.

The fence: at start, when the name server lists slaves of this broker name, the master refuses puts until as many
slaves as are listed are connected with an end at or below its own (after catching up from each one that was
ahead: with several slaves, the one holding the most may not be the first to connect), or the name server lists
fewer, or none, or ``haMasterForceWritable`` is set. A master with no slave starts writable at once.

SYNC_MASTER (``GroupTransfer``, J's ``GroupTransferService``): a put that waits is answered SLAVE_NOT_AVAILABLE at
once when no slave is connected or the best one is ``haSlaveFallbehindMax`` behind; otherwise it waits for any
slave's ack to reach its end, at most ``slaveTimeout`` (then FLUSH_SLAVE_TIMEOUT). Waiters sit in one deque in put
order, an ack resolves every waiter it covers in one pass, and one timer serves every deadline — no task and no
timer per put, as with the group-commit flush.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol

from broker.ha.auth import HAAuthError, HASecurity, challenge_slave
from broker.ha.state import MasterHAState, SlaveLink
from broker.ha.wire import (
    BROKER_ID,
    COUNT,
    DIVERGED,
    EPOCH_ENTRY,
    EPOCH_QUERY,
    EPOCH_TABLE,
    HEADER,
    PULL_FROM_SLAVE,
    REPORT,
    REVERSE_MARK,
)
from broker.store.message_store import MessageStore
from broker.store.results import PutMessageStatus
from broker.store.waiters import OffsetWaiters
from runtime.tasks import ignore_failure, stop_tasks

_log = logging.getLogger("rocketq.broker.ha")

# a writer looks for new bytes this often when idle, in every mode (J parks 100 ms): a SYNC put that waits wakes it
# at once, but a put that does not wait (WAIT=false; controller mode with inSyncReplicas=1) is only found by looking,
# and a controller-mode master's consumers read only what its SyncStateSet acked
_IDLE_POLL_S = 0.02


class AckPolicy(Protocol):
    """Controller mode's SYNC rule (``broker.ha.sync_state``): which offset enough in-sync replicas have acked,
    and what to do on each ack."""

    def needs_slaves(self) -> bool: ...

    def confirmed(self, links: list[SlaveLink], end: int) -> int: ...

    def on_ack(self, link: SlaveLink) -> None: ...


@dataclass(frozen=True, slots=True)
class HAConfig:
    heartbeat_s: float = 5.0  # haSendHeartbeatInterval
    housekeeping_s: float = 20.0  # haHousekeepingInterval
    batch_size: int = 32768  # haTransferBatchSize
    fallbehind_max: int = 256 * 1024 * 1024  # haSlaveFallbehindMax
    slave_timeout_s: float = 3.0  # slaveTimeout
    sync_master: bool = False


class GroupTransfer:
    """SYNC_MASTER waits for a slave's ack, grouped: the store's ``OffsetWaiters`` (one deque, one timer)."""

    def __init__(self, store: MessageStore, state: MasterHAState, cfg: HAConfig, wake: Callable[[], None]) -> None:
        self._store = store
        self._state = state
        self._cfg = cfg
        self._wake = wake
        self._waiters: OffsetWaiters[PutMessageStatus] = OffsetWaiters(
            PutMessageStatus.PUT_OK, PutMessageStatus.FLUSH_SLAVE_TIMEOUT
        )
        self.policy: AckPolicy | None = None

    @property
    def timeouts(self) -> int:
        return self._waiters.timeouts

    def start(self) -> None:
        self._waiters.start(asyncio.get_running_loop())

    def request(self, end: int) -> PutMessageStatus | asyncio.Future[PutMessageStatus]:
        """The store's replica hook: called right after the append that ends at ``end``."""
        state = self._state
        if self.policy is not None:
            if not self.policy.needs_slaves() or end <= state.push2slave_max:
                return PutMessageStatus.PUT_OK
            fut = self._waiters.add(end, self._cfg.slave_timeout_s)
            self._wake()
            return fut
        if not state.links or end - state.push2slave_max >= self._cfg.fallbehind_max:  # J: masterPutWhere - push2Slave
            return PutMessageStatus.SLAVE_NOT_AVAILABLE
        if end <= state.push2slave_max:
            return PutMessageStatus.PUT_OK
        fut = self._waiters.add(end, self._cfg.slave_timeout_s)
        self._wake()
        return fut

    def on_ack(self, ack: int) -> None:
        self._waiters.release(ack)

    def stop(self) -> None:
        self._waiters.fail_all(PutMessageStatus.FLUSH_SLAVE_TIMEOUT)


class HAMaster:
    def __init__(
        self, store: MessageStore, cfg: HAConfig, state: MasterHAState | None = None, security: HASecurity | None = None
    ) -> None:
        self.store = store
        self.cfg = cfg
        self.security = security or HASecurity()
        self.state = state or MasterHAState()
        self._wakes: set[asyncio.Event] = set()  # one per pusher: new bytes to push (set by SYNC_MASTER puts)
        self.transfer = GroupTransfer(store, self.state, cfg, self._notify)
        self._server: asyncio.Server | None = None
        self._conns: set[asyncio.Task[None]] = set()
        self._ids = itertools.count(1)
        self._catching_up = False
        self._expected = 1 << 30  # slaves the name server lists (the fence waits for this many); set at start
        self.port = 0
        # awaited after a catch-up from a slave (that slave's remoting tables come back), before the fence lifts
        self.before_lift: Callable[[str], Awaitable[None]] | None = None
        # controller mode (``broker.ha.replicas``): slaves open with the epoch handshake (``epochs`` gives this
        # master's table), only while ``serving`` (this broker is the elected master); ``policy`` decides the acks
        self.epochs: Callable[[], list[tuple[int, int]]] | None = None
        self.serving = True

    # -- lifecycle -------------------------------------------------------------------------------------------------

    async def start(self, host: str, port: int) -> int:
        """Listen on ``host:port`` (0 = any free port); returns the bound port."""
        self.transfer.start()
        if self.cfg.sync_master:
            self.store.set_replica_wait(self.transfer.request)
        sec = self.security
        self._server = await asyncio.start_server(self._accept, host, port, ssl=sec.server_ssl)
        self.port = self._server.sockets[0].getsockname()[1]
        _log.info(
            "HA service listening on %s:%d (%s, %s, %s)",
            host,
            self.port,
            "SYNC" if self.cfg.sync_master else "ASYNC",
            "TLS" if sec.server_ssl is not None else "plain TCP",
            "slaves authenticate" if sec.secret_of is not None else "NO slave authentication",
        )
        return self.port

    async def stop(self) -> None:
        self.store.set_replica_wait(None)
        self.transfer.stop()
        server, self._server = self._server, None
        if server is not None:
            server.close()
        await stop_tasks(*self._conns, on_error=ignore_failure)
        if server is not None:
            await server.wait_closed()

    def _notify(self) -> None:
        for ev in self._wakes:
            if not ev.is_set():
                ev.set()

    # -- the fence -------------------------------------------------------------------------------------------------

    def fence(self, reason: str) -> None:
        """Take no writes until ``lift_fence`` (a slave may hold bytes this master lacks). Logged at debug: the
        start-up fence is a precaution until the name server is asked; a listed slave is announced then."""
        self.state.fenced = reason
        self.store.refuse_puts(reason)
        _log.debug("master takes no writes until its slaves have reported: %s", reason)

    def expect_slaves(self, n: int) -> None:
        """The name server lists ``n`` slaves: while fenced, wait until that many are connected and level."""
        self._expected = n
        self._maybe_lift()

    def _maybe_lift(self) -> None:
        if self.state.fenced is not None and len(self.state.links) >= self._expected:
            end = self.store.commitlog.max_offset
            peers = ", ".join(link.peer for link in self.state.links.values())
            self.lift_fence(f"{len(self.state.links)} slave(s) hold nothing beyond this master's end {end}: {peers}")

    def lift_fence(self, why: str, *, routine: bool = False) -> None:
        """Take writes again; ``routine`` (a lone master: no slave listed) logs at debug, anything else warns."""
        if self.state.fenced is None:
            return
        self.state.fenced = None
        self.store.refuse_puts(None)
        (_log.debug if routine else _log.warning)("master takes writes: %s", why)

    # -- connections -----------------------------------------------------------------------------------------------

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._conns.add(task)
        peer = writer.get_extra_info("peername")
        link = SlaveLink(f"{peer[0]}:{peer[1]}" if peer else "?")
        cid = next(self._ids)
        pusher: asyncio.Task[None] | None = None
        try:
            secret_of = self.security.secret_of
            if secret_of is not None:
                try:
                    who = await challenge_slave(reader, writer, secret_of, self.cfg.housekeeping_s)
                except HAAuthError as exc:
                    self.state.auth_refused += 1
                    _log.warning("HA connection from %s refused: %s", link.peer, exc)
                    return
                _log.info("slave %s authenticated (%s)", link.peer, f"access key {who}" if who else "haAuthSecret")
            first = await self._report(reader)
            if self.epochs is not None:
                if first != EPOCH_QUERY or not self.serving:
                    _log.warning(
                        "HA connection from %s closed: %s",
                        link.peer,
                        "no epoch handshake" if first != EPOCH_QUERY else "not the master",
                    )
                    return
                first = await self._handshake(reader, writer, link)
            end = self.store.commitlog.max_offset
            if first > end:
                await self._slave_ahead(first, reader, writer, link)
                return
            self.state.links[cid] = link
            self._ack(link, first)
            self._maybe_lift()
            start = first if first > 0 else self.store.replication_start()
            _log.info("slave %s connected, its log ends at %d; sending from %d", link.peer, first, start)
            writer.write(HEADER.pack(start, 0))  # an empty header at once: the slave knows it is being followed
            pusher = asyncio.get_running_loop().create_task(self._push(writer, start, link), name="ha-push")
            while True:
                ack = await self._report(reader)
                if ack > self.store.commitlog.max_offset:
                    _log.error("slave %s acked %d, beyond this master's end: closing", link.peer, ack)
                    return
                self._ack(link, ack)
        except (asyncio.IncompleteReadError, ConnectionError, TimeoutError, OSError) as exc:
            _log.info("slave %s disconnected: %r", link.peer, exc)
        finally:
            self._conns.discard(task)
            self.state.links.pop(cid, None)
            await stop_tasks(pusher, on_error=ignore_failure)
            writer.close()

    async def _handshake(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, link: SlaveLink) -> int:
        """Controller mode: the slave names itself, gets this master's end and epoch table, cuts its own log to
        agree, then reports its end as usual (returned)."""
        assert self.epochs is not None
        async with asyncio.timeout(self.cfg.housekeeping_s):
            (link.broker_id,) = BROKER_ID.unpack(await reader.readexactly(BROKER_ID.size))
        table = self.epochs()
        writer.write(HEADER.pack(self.store.commitlog.max_offset, EPOCH_TABLE) + COUNT.pack(len(table)))
        writer.write(b"".join(EPOCH_ENTRY.pack(e, s) for e, s in table))
        await writer.drain()
        return await self._report(reader)

    def drop_all(self) -> None:
        """Close every slave connection (this broker stops being the master, or starts a new epoch: each slave
        reconnects and checks its log against the new table)."""
        for task in list(self._conns):
            task.cancel()

    async def _report(self, reader: asyncio.StreamReader) -> int:
        async with asyncio.timeout(self.cfg.housekeeping_s):
            (value,) = REPORT.unpack(await reader.readexactly(REPORT.size))
        return int(value)

    def _ack(self, link: SlaveLink, ack: int) -> None:
        link.ack_offset = ack
        link.last_report_at = asyncio.get_running_loop().time()
        state = self.state
        policy = self.transfer.policy
        if policy is not None:
            if ack >= self.store.commitlog.max_offset:
                link.caught_up_at = time.time()
            elif ack >= link.mark_offset:
                link.caught_up_at = max(link.caught_up_at, link.mark_at)
            policy.on_ack(link)
            if self.store.dispatcher.pending:  # the confirm offset may have moved: consumers may read further
                self.store.dispatcher.drain()
            confirmed = policy.confirmed(list(state.links.values()), self.store.commitlog.max_offset)
            if confirmed > state.push2slave_max:
                state.push2slave_max = confirmed
                self.transfer.on_ack(confirmed)
            return
        if ack > state.push2slave_max:
            state.push2slave_max = ack
            self.transfer.on_ack(ack)

    async def _push(self, writer: asyncio.StreamWriter, offset: int, link: SlaveLink) -> None:
        """Stream the log to one slave from ``offset``: data as soon as it is written, heartbeats when idle."""
        loop = asyncio.get_running_loop()
        store = self.store
        batch = self.cfg.batch_size
        heartbeat = self.cfg.heartbeat_s
        wake = asyncio.Event()
        self._wakes.add(wake)
        last_write = loop.time()
        try:
            while True:
                wake.clear()
                chunk = store.read_replication_chunk(offset, batch)
                if chunk:
                    writer.write(HEADER.pack(offset, len(chunk)))
                    writer.write(chunk)
                    offset += len(chunk)
                    link.transferred += len(chunk)
                    if link.mark_offset <= link.ack_offset or link.mark_offset == 2**63 - 1:
                        link.mark_offset, link.mark_at = store.commitlog.max_offset, time.time()
                    await writer.drain()
                    last_write = loop.time()
                    continue
                if offset < store.commitlog.min_offset:
                    _log.error("slave %s needs offset %d, which this master no longer holds", link.peer, offset)
                    writer.close()
                    return
                if link.mark_offset <= link.ack_offset or link.mark_offset == 2**63 - 1:
                    link.mark_offset, link.mark_at = offset, time.time()  # all sent: acking it is catching up
                now = loop.time()
                if now - last_write >= heartbeat:
                    writer.write(HEADER.pack(offset, 0))
                    await writer.drain()
                    last_write = now
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(max(0.001, min(_IDLE_POLL_S, heartbeat - (now - last_write)))):
                        await wake.wait()
        except (ConnectionError, OSError) as exc:
            _log.info("push to slave %s stopped: %r", link.peer, exc)
            writer.close()
        finally:
            self._wakes.discard(wake)

    async def _slave_ahead(
        self, slave_end: int, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, link: SlaveLink
    ) -> None:
        store = self.store
        end = store.commitlog.max_offset
        if self.state.fenced is None:
            _log.error(
                "slave %s holds %d bytes beyond this master's end %d, but this master already takes writes: the logs "
                "have diverged; the slave keeps its bytes",
                link.peer,
                slave_end - end,
                end,
            )
            self.state.diverged_slaves[link.peer] = slave_end
            writer.write(HEADER.pack(end, DIVERGED))
            await writer.drain()
            return
        if self._catching_up:
            return  # another slave is being copied from; this one reconnects and reports again
        self._catching_up = True
        try:
            _log.warning("slave %s is ahead (%d > %d): copying its log before taking writes", link.peer, slave_end, end)
            writer.write(HEADER.pack(end, PULL_FROM_SLAVE))
            await writer.drain()
            while await self._report(reader) != REVERSE_MARK:
                pass
            while store.commitlog.max_offset < slave_end:
                async with asyncio.timeout(self.cfg.housekeeping_s):
                    off, n = HEADER.unpack(await reader.readexactly(HEADER.size))
                    body = await reader.readexactly(n) if n > 0 else b""
                if body:
                    store.append_replicated(off, body)
            copied = store.commitlog.max_offset - end
            self.state.caught_up_from_slave += copied
            _log.warning("copied %d bytes back from slave %s, whose log ended at %d", copied, link.peer, slave_end)
            if self.before_lift is not None:
                await self.before_lift(link.peer)
            # the slave reconnects as an ordinary one; the fence lifts once every listed slave is level
        except ValueError as exc:
            _log.error("catching up from slave %s failed: %s", link.peer, exc)
        finally:
            self._catching_up = False
