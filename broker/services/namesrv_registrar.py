"""NamesrvRegistrar: keeps this broker registered with every name server.

REGISTER_BROKER goes to all name servers in parallel at start, every ``registerNameServerPeriod`` (30 s), and at
once when the topic table changes (``trigger()``, wired to the TopicConfigTable's change listener). J registers a
topic auto-created by a send, and a group's retry topic made by its heartbeat, before it answers: those handlers
await ``registered()``, which returns once a round begun after the change has ended (all changes made meanwhile
share that round, so a burst of creations costs one registration), or after ``registerBrokerTimeoutMills``. UNREGISTER_BROKER goes out on shutdown. A name server that is down is logged and retried on the
next round; it never stops the broker.

Incremental registration (issue #21; J 5's ``registerIncrementBrokerData``): the start and periodic rounds send the
whole table; a change sends only the topics changed since the last round (``TopicConfigTable.take_changed``) with
the new dataVersion, which a name server adds to the routes it has (J's and ours keep topics a registration does not
mention). Changes made while a round is in flight share the next round. The whole table goes instead when the
table cannot tell what changed, after a failed round, and to a name server whose connection is not the one that
took the last whole table (it may have restarted and know nothing of this broker), so routes never miss a topic
and a creation costs the same at 10k topics as at 10.

Body (RegisterBrokerBody, uncompressed JSON, docs/reference/protocol.md §d)::

    {"topicConfigSerializeWrapper": {"topicConfigTable": {name: TopicConfig}, "dataVersion": {...}},
     "filterServerList": []}

When ``brokerPermission`` lacks READ or WRITE, every topic is registered with the broker's permission instead of
its own (J ``registerBrokerAll``), which is how an operator drains a broker.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable

import structlog

from broker import topics as T
from broker.services.topic_config import TopicConfigTable, next_data_version
from protocol.bodies import RegisterBrokerBody, TopicConfigSerializeWrapper
from protocol.codes import RequestCode, ResponseCode
from protocol.command import RemotingCommand
from protocol.crc import crc32
from protocol.errors import RemotingError
from protocol.headers import RegisterBrokerRequestHeader, RegisterBrokerResponseHeader, UnregisterBrokerRequestHeader
from protocol.remoting.client import RemotingClient
from runtime.tasks import stop_tasks

_log = structlog.get_logger("rocketq.broker.registrar")


class NamesrvRegistrar:
    def __init__(
        self,
        client: RemotingClient,
        namesrv_addrs: list[str],
        topics: TopicConfigTable,
        *,
        cluster_name: str,
        broker_name: str,
        broker_id: int,
        broker_permission: int,
        period_ms: int,
        timeout_ms: int,
    ) -> None:
        self._client = client
        self._addrs = list(namesrv_addrs)
        self._topics = topics
        self._cluster = cluster_name
        self._name = broker_name
        self._id = broker_id
        self._perm = broker_permission
        self._period = period_ms / 1000
        self._timeout = timeout_ms / 1000
        self._broker_addr = ""
        self._ha_addr = ""
        self._wake = asyncio.Event()
        self._requested = 0  # changes signalled (trigger calls)
        self._done = 0  # changes covered by a finished round
        self._waiters: list[tuple[int, asyncio.Future[None]]] = []
        self._task: asyncio.Task[None] | None = None
        self._full_conn: dict[str, object] = {}  # name server → the connection that took the last whole table
        self.registrations = 0  # successful REGISTER_BROKER replies, for tests and stats
        # a slave learns its master's HA and remoting address from each reply (J handleRegisterBrokerResult)
        self.on_reply: Callable[[RegisterBrokerResponseHeader], None] | None = None
        # controller mode: true while this master's lease has run out (paused, cut off): its periodic registration
        # as id 0 would take the route back from the master the controller elected meanwhile (J: stateVersion)
        self.stale_master: Callable[[], bool] | None = None

    @property
    def namesrv_addrs(self) -> list[str]:
        return list(self._addrs)

    async def start(self, broker_addr: str, ha_addr: str) -> None:
        """Register once (awaited, failures only logged), then keep registering in the background."""
        self._broker_addr, self._ha_addr = broker_addr, ha_addr
        if not self._addrs:
            _log.warning("no name server address configured; clients cannot find this broker")
        await self.register_all()
        self._task = asyncio.get_running_loop().create_task(self._loop(), name="namesrv-registrar")

    async def register_as(self, broker_id: int, broker_addr: str, ha_addr: str) -> None:
        """Controller mode: register under ``broker_id`` now (0 when the controller made this broker master, its
        replica id otherwise) with the whole table; the first call starts the periodic registration."""
        self._id = broker_id
        if self._task is None:
            await self.start(broker_addr, ha_addr)
        else:
            await self.register_all()

    def set_permission(self, perm: int) -> None:
        """``brokerPermission`` changed at runtime: every topic is registered again, with a new data version."""
        self._perm = perm
        self._topics.data_version = next_data_version(self._topics.data_version)
        self._full_conn.clear()
        self.trigger()

    def trigger(self) -> None:
        """Register with every name server as soon as possible (topic table changed)."""
        self._requested += 1
        self._wake.set()

    async def registered(self) -> None:
        """Return once the changes signalled so far have been registered (or tried: a name server that is down
        costs at most the registration timeout); at once without name servers or before ``start``."""
        target = self._requested
        if self._done >= target or not self._addrs or self._task is None:
            return
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[None] = loop.create_future()
        self._waiters.append((target, fut))
        # a timer, not asyncio.timeout: a handler awaiting this may not run in a Task yet (protocol.remoting.handler)
        timer = loop.call_later(self._timeout, lambda: None if fut.done() else fut.set_result(None))
        try:
            await fut
        finally:
            timer.cancel()

    def _covered(self, upto: int) -> None:
        self._done = max(self._done, upto)
        keep: list[tuple[int, asyncio.Future[None]]] = []
        for target, fut in self._waiters:
            if target <= upto:
                if not fut.done():
                    fut.set_result(None)
            else:
                keep.append((target, fut))
        self._waiters = keep

    async def stop(self) -> None:
        """Stop the periodic task and unregister from every name server."""
        task, self._task = self._task, None
        await stop_tasks(task)
        self._covered(self._requested)  # nobody waits on a registrar that stopped
        if self._broker_addr:
            await asyncio.gather(*(self._unregister(a) for a in self._addrs))

    async def _loop(self) -> None:
        while True:
            # asyncio.timeout, not wait_for: 3.11's wait_for swallows a stop() that races a topic-change wake
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self._period):
                    await self._wake.wait()
            woke = self._wake.is_set()
            self._wake.clear()
            upto = self._requested
            try:
                if self.stale_master is None or self._id != 0 or not self.stale_master():
                    await (self.register_changed() if woke else self.register_all())
            finally:
                self._covered(upto)

    def _body(self, names: list[str] | None = None) -> bytes:
        """The RegisterBrokerBody (``protocol.bodies``) of the whole topic table, or of only ``names`` (those still
        in the table) for an incremental registration; a broker without read+write permission reports its own perm
        on every topic, as J does."""
        perm = None if T.is_readable(self._perm) and T.is_writeable(self._perm) else self._perm
        tcs = self._topics.all() if names is None else [tc for tc in map(self._topics.get, names) if tc is not None]
        wrapper = TopicConfigSerializeWrapper(
            topic_config_table={
                tc.topic_name: tc if perm is None else tc.model_copy(update={"perm": perm}) for tc in tcs
            },
            data_version=self._topics.data_version,
        )
        return RegisterBrokerBody(topic_config_serialize_wrapper=wrapper).encode()

    async def register_all(self) -> None:
        """Register the whole table with every name server."""
        self._topics.take_changed()
        if not self._addrs:
            return
        body = self._body()
        await asyncio.gather(*(self._register_full(a, body) for a in self._addrs))

    async def register_changed(self) -> None:
        """Register the topics changed since the last round (the whole table where it must, see above)."""
        names = self._topics.take_changed()
        if not self._addrs:
            return
        if names is None:
            await self.register_all()
            return
        body = self._body(names)
        full: list[bytes] = []

        async def one(addr: str) -> None:
            if self._full_conn.get(addr) is not await self._connection(addr):
                if not full:
                    full.append(self._body())
                await self._register_full(addr, full[0])
            elif not await self._register(addr, body):
                self._full_conn.pop(addr, None)  # it may have missed these topics: the whole table next time

        await asyncio.gather(*(one(a) for a in self._addrs))

    async def _connection(self, addr: str) -> object:
        try:
            async with asyncio.timeout(self._timeout):
                return await self._client.get_connection(addr)
        except (RemotingError, TimeoutError, OSError):
            return None

    async def _register_full(self, addr: str, body: bytes) -> None:
        conn = await self._connection(addr)
        if await self._register(addr, body) and conn is not None:
            self._full_conn[addr] = conn
        else:
            self._full_conn.pop(addr, None)

    async def _register(self, addr: str, body: bytes) -> bool:
        header = RegisterBrokerRequestHeader(
            self._name, self._broker_addr, self._cluster, self._ha_addr, self._id, False, crc32(body) & 0x7FFFFFFF
        )
        cmd = RemotingCommand.request(RequestCode.REGISTER_BROKER, header.to_ext_fields(), body)
        try:
            resp = await self._client.invoke(addr, cmd, self._timeout)
        except RemotingError as exc:
            _log.warning("register broker failed", namesrv=addr, error=str(exc))
            return False
        if resp.code != ResponseCode.SUCCESS:
            _log.warning("register broker refused", namesrv=addr, code=resp.code, remark=resp.remark)
            return False
        self.registrations += 1
        if self.on_reply is not None:
            self.on_reply(RegisterBrokerResponseHeader.from_ext_fields(resp.ext_fields))
        return True

    async def _unregister(self, addr: str) -> None:
        header = UnregisterBrokerRequestHeader(self._name, self._broker_addr, self._cluster, self._id)
        cmd = RemotingCommand.request(RequestCode.UNREGISTER_BROKER, header.to_ext_fields())
        try:
            resp = await self._client.invoke(addr, cmd, min(self._timeout, 3.0))
        except RemotingError as exc:
            _log.warning("unregister broker failed", namesrv=addr, error=str(exc))
            return
        if resp.code == ResponseCode.SUCCESS:
            _log.info("unregistered from name server", namesrv=addr)
