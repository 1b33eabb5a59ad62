"""The slave's side of replication (RocketMQ's ``HAService.HAClient``): connect to the master's HA address, report
this log's end, append every pushed chunk byte for byte at exactly that end, and report again after each append.
The store dispatches the appended records into this slave's own consume queues and index, so it serves pulls and
queries. Byte layout: ``broker.ha.wire``.

The master's HA address is ``haMasterAddress`` when set, otherwise the ``haServerAddr`` of the last REGISTER_BROKER
reply (``set_master``). When the connection cannot be made or is lost the client asks for a fresh registration
(``on_lost``, so it learns a master that moved) and retries after ``_RETRY_S`` (J waits 5 s). In controller mode
a slave that has no master HA address yet (just after an election, the new master may register with the name
servers after this slave did) asks again every 0.1 s for 2 s, then every ``_RETRY_S``.

A slave never truncates: when the master pushes an offset other than this log's end, the connection is closed and
the slave reports its end again; when the master says the slave is ahead (``DIVERGED``) it keeps its bytes, keeps
serving reads, logs it and shows it (``SlaveHAState.state`` = AHEAD_OF_MASTER); when the master asks for the bytes
it lacks (``PULL_FROM_SLAVE``) it streams them (SERVING_MASTER), then reconnects as an ordinary slave.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass

from broker.ha.auth import HAAuthError, HASecurity, answer_master
from broker.ha.state import SlaveHAState
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
from runtime.tasks import stop_tasks

_log = logging.getLogger("rocketq.broker.ha.slave")

_RETRY_S = 1.0
_ASK_FAST_S = 0.1  # controller mode, no master HA address yet: re-ask this often for _ASK_FAST_TRIES, then _RETRY_S
_ASK_FAST_TRIES = 20
_CONNECT_TIMEOUT_S = 3.0


@dataclass(frozen=True, slots=True)
class SlaveConfig:
    heartbeat_s: float = 5.0  # haSendHeartbeatInterval
    housekeeping_s: float = 20.0  # haHousekeepingInterval
    batch_size: int = 32768  # haTransferBatchSize (when serving a master that catches up)
    fixed_master: str | None = None  # haMasterAddress


class HAClient:
    def __init__(
        self,
        store: MessageStore,
        cfg: SlaveConfig,
        state: SlaveHAState | None = None,
        on_lost: Callable[[], None] | None = None,
        security: HASecurity | None = None,
    ) -> None:
        self.store = store
        self.cfg = cfg
        self.security = security or HASecurity()
        self.state = state or SlaveHAState()
        self._on_lost = on_lost
        self._changed = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._writer: asyncio.StreamWriter | None = None  # the open connection's, while there is one
        if cfg.fixed_master:
            self.state.master_ha_addr = cfg.fixed_master
        # controller mode (``broker.ha.replicas``): open each connection with the epoch handshake as replica
        # ``broker_id``; ``handshake(master_end, master_epochs)`` cuts this log to agree (ValueError: refuse)
        self.handshake: Callable[[int, list[tuple[int, int]]], None] | None = None
        self.broker_id = -1

    def set_master(self, ha_addr: str | None, master_addr: str | None) -> None:
        """From a REGISTER_BROKER reply: the master's HA address (ignored with ``haMasterAddress``) and its
        remoting address (for SlaveSynchronize)."""
        st = self.state
        st.master_addr = master_addr or None
        if self.cfg.fixed_master or not ha_addr or ha_addr == st.master_ha_addr:
            return
        _log.info("master HA address is now %s (was %s)", ha_addr, st.master_ha_addr)
        st.master_ha_addr = ha_addr
        self._changed.set()
        if self._writer is not None:  # drop the old master's connection now (a paused one would hold it 20 s)
            self._writer.close()

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run(), name="ha-client")

    async def stop(self) -> None:
        task, self._task = self._task, None
        await stop_tasks(task)

    async def _pause(self, seconds: float) -> None:
        """Wait ``seconds``, or less if the master's address changes."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(seconds):
                await self._changed.wait()
        self._changed.clear()

    async def _run(self) -> None:
        st = self.state
        asks = 0
        while True:
            addr = st.master_ha_addr
            if not addr:  # a new master's HA address comes with a registration reply: ask for one
                if self._on_lost is not None and self.handshake is not None:  # controller mode only
                    self._on_lost()
                    # just after an election the new master may not have registered yet: ask again soon
                    asks += 1
                    await self._pause(_ASK_FAST_S if asks <= _ASK_FAST_TRIES else _RETRY_S)
                else:
                    await self._pause(_RETRY_S)
                continue
            asks = 0
            host, _, port = addr.rpartition(":")
            sec = self.security
            try:
                async with asyncio.timeout(_CONNECT_TIMEOUT_S):
                    reader, writer = await asyncio.open_connection(
                        host, int(port), ssl=sec.client_ssl, server_hostname=host if sec.client_ssl else None
                    )
            except (OSError, TimeoutError, ValueError) as exc:
                _log.info("cannot connect to master %s: %r", addr, exc)
                if self._on_lost is not None:
                    self._on_lost()
                await self._pause(_RETRY_S)
                continue
            st.connects += 1
            self._writer = writer
            if st.state != "AHEAD_OF_MASTER":
                st.state = "CONNECTED"
            pause = _RETRY_S
            try:
                if sec.credentials is not None:
                    await answer_master(reader, writer, *sec.credentials, self.cfg.housekeeping_s)
                pause = await self._session(reader, writer)
            except HAAuthError as exc:
                _log.error("master %s: %s", addr, exc)
            except (asyncio.IncompleteReadError, ConnectionError, TimeoutError, OSError) as exc:
                _log.info("connection to master %s lost: %r", addr, exc)
            except ValueError as exc:
                _log.error("replicated bytes from %s refused: %s", addr, exc)
            finally:
                self._writer = None
                writer.close()
                with contextlib.suppress(Exception):
                    await writer.wait_closed()
            if st.state not in ("AHEAD_OF_MASTER",):
                st.state = "DISCONNECTED"
            if self._on_lost is not None:
                self._on_lost()
            await self._pause(pause)

    async def _session(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> float:
        """One connection; returns how long to wait before the next."""
        store = self.store
        st = self.state
        loop = asyncio.get_running_loop()
        if self.handshake is not None:
            await self._epoch_handshake(reader, writer)
        reported = store.commitlog.max_offset
        writer.write(REPORT.pack(reported))
        await writer.drain()
        last_report = last_read = loop.time()
        heartbeat = self.cfg.heartbeat_s
        while True:
            try:
                async with asyncio.timeout(max(0.001, heartbeat - (loop.time() - last_report))):
                    head = await reader.readexactly(HEADER.size)
            except TimeoutError:
                if loop.time() - last_read > self.cfg.housekeeping_s:
                    # the master sends at least a heartbeat header every haSendHeartbeatInterval
                    raise TimeoutError(f"nothing from the master for {self.cfg.housekeeping_s:.0f} s") from None
                writer.write(REPORT.pack(store.commitlog.max_offset))
                await writer.drain()
                last_report = loop.time()
                continue
            last_read = loop.time()
            off, n = HEADER.unpack(head)
            mine = store.commitlog.max_offset
            if n == DIVERGED:
                st.state = "AHEAD_OF_MASTER"
                st.ahead_by = mine - off
                st.master_offset = off
                _log.error(
                    "this slave holds %d bytes beyond its master's end %d and the master already takes writes: "
                    "keeping them and serving reads; an operator must decide (see README, recovery)",
                    mine - off,
                    off,
                )
                return self.cfg.heartbeat_s
            if n == PULL_FROM_SLAVE:
                await self._serve_master(off, reader, writer)
                return 0.0
            if n < 0:
                raise ValueError(f"transfer header with size {n}")
            async with asyncio.timeout(self.cfg.housekeeping_s):
                body = await reader.readexactly(n) if n > 0 else b""
            if mine != 0 and off != mine:
                _log.warning("master pushed offset %d not equal to this slave's end %d: reconnecting", off, mine)
                return _RETRY_S
            st.master_offset = max(st.master_offset, off + n)
            if st.state != "REPLICATING":
                st.state = "REPLICATING"
                st.ahead_by = 0
            if body:
                reported = store.append_replicated(off, body)
                st.last_transfer_at = loop.time()
                writer.write(REPORT.pack(reported))
                last_report = loop.time()
                # J reports after each append; drain only when the socket pushes back
                transport = writer.transport
                if transport.get_write_buffer_size() > 65536:
                    await writer.drain()

    async def _epoch_handshake(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        assert self.handshake is not None
        writer.write(REPORT.pack(EPOCH_QUERY) + BROKER_ID.pack(self.broker_id))
        await writer.drain()
        async with asyncio.timeout(self.cfg.housekeeping_s):
            master_end, kind = HEADER.unpack(await reader.readexactly(HEADER.size))
            if kind != EPOCH_TABLE:
                raise ValueError(f"expected the master's epoch table, got a header of size {kind}")
            (n,) = COUNT.unpack(await reader.readexactly(COUNT.size))
            if not 0 <= n <= 1 << 20:
                raise ValueError(f"epoch table of {n} entries")
            raw = await reader.readexactly(n * EPOCH_ENTRY.size)
        table = [EPOCH_ENTRY.unpack_from(raw, i * EPOCH_ENTRY.size) for i in range(n)]
        self.handshake(master_end, [(int(e), int(o)) for e, o in table])

    async def _serve_master(self, offset: int, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """The master's log ends at ``offset`` and ours goes further: stream ours from there."""
        st = self.state
        store = self.store
        st.state = "SERVING_MASTER"
        end = store.commitlog.max_offset
        _log.warning(
            "master's log ends at %d, this slave's at %d: sending it the %d bytes it lacks", offset, end, end - offset
        )
        writer.write(REPORT.pack(REVERSE_MARK))
        offset = max(offset, store.replication_start())
        while offset < end:
            chunk = store.read_replication_chunk(offset, self.cfg.batch_size)
            if not chunk:
                break
            writer.write(HEADER.pack(offset, len(chunk)))
            writer.write(chunk)
            offset += len(chunk)
            await writer.drain()
        # the master closes the connection once it has everything
        async with asyncio.timeout(self.cfg.housekeeping_s):
            while await reader.read(65536):
                pass
        st.state = "DISCONNECTED"
