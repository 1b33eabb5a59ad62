"""ClientInstance: the connections, routes and timers shared by the producers and consumers of one client id.

* Client id ``ip@instanceName`` as RocketMQ forms it; the instance name defaults to ``pid#nanotime`` so several
  clients in one process get distinct ids (the broker tells consumers apart by id).
* Name servers ``"a:9876;b:9876"``: route lookups go to the current one and fail over to the next on errors.
* Route refresh every ``poll_namesrv_interval`` (30 s) and on demand; heartbeats every ``heartbeat_interval`` (30 s)
  to the master of every broker in the routes of topics its members use.
* Requests from brokers (NOTIFY_CONSUMER_IDS_CHANGED, RESET_CONSUMER_CLIENT_OFFSET, GET_CONSUMER_RUNNING_INFO,
  CHECK_TRANSACTION_STATE) are routed to the member registered for the group.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import time
from typing import Any, Protocol

import structlog

from client.api import ClientAPI
from client.message import MessageQueue
from client.route import TopicRoute, loads_lenient
from protocol.codes import LanguageCode, RequestCode, ResponseCode, SerializeType
from protocol.command import RemotingCommand
from protocol.errors import RemotingError
from protocol.headers import (
    CheckTransactionStateRequestHeader,
    GetConsumerRunningInfoRequestHeader,
    NotifyConsumerIdsChangedRequestHeader,
    ResetOffsetRequestHeader,
)
from protocol.message import decode_records
from protocol.remoting.client import RemotingClient
from protocol.remoting.handler import HandlerRegistry, RequestContext

_log = structlog.get_logger("rocketq.client")


class Member(Protocol):
    """A producer or consumer registered with an instance."""

    group: str

    def topics(self) -> set[str]: ...

    def heartbeat_data(self) -> dict[str, Any]: ...


def local_ip() -> str:
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect(("10.255.255.255", 1))  # a UDP connect sends nothing
            ip: str = s.getsockname()[0]
            return ip
    except OSError:
        return "127.0.0.1"


def parse_namesrv(addr: str | None) -> list[str]:
    addr = addr or os.environ.get("NAMESRV_ADDR", "127.0.0.1:9876")
    out = [a.strip() for a in addr.replace(",", ";").split(";") if a.strip()]
    if not out:
        raise ValueError(f"no name server address in {addr!r}")
    return out


class ClientInstance:
    def __init__(
        self,
        namesrv_addr: str | None = None,
        *,
        instance_name: str | None = None,
        client_ip: str | None = None,
        serialize_type: SerializeType = SerializeType.MSGPACK,
        poll_namesrv_interval: float = 30.0,
        heartbeat_interval: float = 30.0,
        request_timeout: float = 3.0,
    ) -> None:
        self.namesrv_addrs = parse_namesrv(namesrv_addr)
        self.client_ip = client_ip or local_ip()
        self.instance_name = instance_name or f"{os.getpid()}#{time.monotonic_ns()}"
        self.client_id = f"{self.client_ip}@{self.instance_name}"
        self.request_timeout = request_timeout
        self._poll_interval = poll_namesrv_interval
        self._heartbeat_interval = heartbeat_interval
        registry = HandlerRegistry()
        registry.register(RequestCode.NOTIFY_CONSUMER_IDS_CHANGED, self._on_notify_ids_changed)
        registry.register(RequestCode.RESET_CONSUMER_CLIENT_OFFSET, self._on_reset_offset)
        registry.register(RequestCode.GET_CONSUMER_RUNNING_INFO, self._on_running_info)
        registry.register(RequestCode.CHECK_TRANSACTION_STATE, self._on_check_transaction)
        self.remoting = RemotingClient(registry)
        self.api = ClientAPI(self.remoting, serialize_type)
        self.routes: dict[str, TopicRoute] = {}
        self.producers: dict[str, Any] = {}
        self.consumers: dict[str, Any] = {}
        self._ns_index = 0
        self._tasks: list[asyncio.Task[None]] = []
        self._users = 0
        self._started = False

    # -- lifecycle -------------------------------------------------------------------------------------------------

    async def start(self) -> None:
        self._users += 1
        if self._started:
            return
        self._started = True
        loop = asyncio.get_running_loop()
        self._tasks = [
            loop.create_task(self._every(self._poll_interval, self.refresh_routes), name="client-route-refresh"),
            loop.create_task(
                self._every(self._heartbeat_interval, self.send_heartbeat_to_all), name="client-heartbeat"
            ),
        ]

    async def close(self) -> None:
        self._users -= 1
        if self._users > 0 or not self._started:
            return
        self._started = False
        for t in self._tasks:
            t.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._tasks = []
        await self.remoting.close()

    async def _every(self, interval: float, fn: Any) -> None:
        while True:
            await asyncio.sleep(interval)
            try:
                await fn()
            except Exception as exc:  # a timer must survive a bad round
                _log.warning("periodic task failed", task=getattr(fn, "__name__", "?"), error=str(exc))

    def register_producer(self, group: str, member: Any) -> None:
        self.producers[group] = member

    def register_consumer(self, group: str, member: Any) -> None:
        if group in self.consumers and self.consumers[group] is not member:
            raise ValueError(f"consumer group {group} is already registered in client {self.client_id}")
        self.consumers[group] = member

    def unregister(self, group: str) -> None:
        self.producers.pop(group, None)
        self.consumers.pop(group, None)

    # -- routes ----------------------------------------------------------------------------------------------------

    async def fetch_route(self, topic: str) -> TopicRoute | None:
        """Ask the name servers (current first, then the others) for a topic's route."""
        last_exc: Exception | None = None
        n = len(self.namesrv_addrs)
        for i in range(n):
            addr = self.namesrv_addrs[(self._ns_index + i) % n]
            try:
                route = await self.api.get_route(addr, topic, self.request_timeout)
            except RemotingError as exc:
                last_exc = exc
                continue
            self._ns_index = (self._ns_index + i) % n
            return route
        if last_exc is not None:
            raise last_exc
        return None

    async def get_route(self, topic: str, *, refresh: bool = False) -> TopicRoute | None:
        if not refresh and topic in self.routes:
            return self.routes[topic]
        route = await self.fetch_route(topic)
        if route is not None:
            self.routes[topic] = route
        return route

    async def refresh_routes(self) -> None:
        topics = set(self.routes)
        for m in (*self.producers.values(), *self.consumers.values()):
            topics |= m.topics()
        for topic in topics:
            try:
                await self.get_route(topic, refresh=True)
            except RemotingError as exc:
                _log.warning("route refresh failed", topic=topic, error=str(exc))

    async def fetch_topic_list(self) -> list[str]:
        return await self.api.get_topic_list(self.namesrv_addrs[self._ns_index], self.request_timeout)

    def broker_addr(self, broker_name: str, *, master_only: bool = True) -> str | None:
        for route in self.routes.values():
            addr = route.master_addr(broker_name) if master_only else route.read_addr(broker_name)
            if addr:
                return addr
        return None

    async def find_broker_addr(self, mq: MessageQueue, *, master_only: bool = True) -> str:
        addr = self.broker_addr(mq.broker_name, master_only=master_only)
        if addr is None:
            await self.get_route(mq.topic, refresh=True)
            addr = self.broker_addr(mq.broker_name, master_only=master_only)
        if addr is None:
            from client.errors import NoBrokerAvailableError

            raise NoBrokerAvailableError(f"no address for broker {mq.broker_name} of topic {mq.topic}")
        return addr

    # -- heartbeats ------------------------------------------------------------------------------------------------

    def heartbeat_body(self) -> dict[str, Any]:
        return {
            "clientID": self.client_id,
            "producerDataSet": [{"groupName": g} for g in self.producers],
            "consumerDataSet": [c.heartbeat_data() for c in self.consumers.values()],
        }

    def broker_masters(self) -> set[str]:
        addrs: set[str] = set()
        for route in self.routes.values():
            for bd in route.brokers.values():
                if bd.master_addr:
                    addrs.add(bd.master_addr)
        return addrs

    async def send_heartbeat_to_all(self) -> None:
        if not self.producers and not self.consumers:
            return
        body = self.heartbeat_body()
        for addr in self.broker_masters():
            try:
                await self.api.heartbeat(addr, body, self.request_timeout)
            except RemotingError as exc:
                _log.warning("heartbeat failed", broker=addr, error=str(exc))

    async def unregister_from_brokers(self, producer_group: str | None, consumer_group: str | None) -> None:
        for addr in self.broker_masters():
            try:
                await self.api.unregister_client(addr, self.client_id, producer_group, consumer_group, 1.0)
            except RemotingError:
                pass

    # -- requests from brokers -------------------------------------------------------------------------------------

    async def _on_notify_ids_changed(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand | None:
        h = NotifyConsumerIdsChangedRequestHeader.from_ext_fields(cmd.ext_fields)
        consumer = self.consumers.get(h.consumer_group)
        if consumer is not None:
            consumer.rebalance_soon()
        return None

    async def _on_reset_offset(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand | None:
        h = ResetOffsetRequestHeader.from_ext_fields(cmd.ext_fields)
        consumer = self.consumers.get(h.group)
        if consumer is not None and cmd.body:
            offsets = parse_reset_offset_body(cmd.body)
            await consumer.reset_offsets({mq: off for mq, off in offsets.items() if mq.topic == h.topic})
        return cmd.make_response()

    async def _on_running_info(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand | None:
        h = GetConsumerRunningInfoRequestHeader.from_ext_fields(cmd.ext_fields)
        consumer = self.consumers.get(h.consumer_group)
        if consumer is None:
            return cmd.make_response(ResponseCode.SYSTEM_ERROR, f"The Consumer Group <{h.consumer_group}> not exist")
        return cmd.make_response(body=json.dumps(consumer.running_info()).encode())

    async def _on_check_transaction(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand | None:
        h = CheckTransactionStateRequestHeader.from_ext_fields(cmd.ext_fields)
        msgs = decode_records(cmd.body) if cmd.body else []
        if not msgs:
            return None
        group = msgs[0].properties.get("PGROUP", "")
        producer = self.producers.get(group)
        if producer is not None and hasattr(producer, "check_transaction"):
            asyncio.get_running_loop().create_task(producer.check_transaction(ctx.conn.peer, h, msgs[0]))
        return None


def parse_reset_offset_body(body: bytes) -> dict[MessageQueue, int]:
    """Both forms: J's ``{"offsetTable":{{mq}:offset}}`` (object keys) and C's ``{"offsetTable":[{...,offset}]}``."""
    text = body.decode()
    try:
        raw = loads_lenient(text)
    except ValueError:
        raw = None
    out: dict[MessageQueue, int] = {}
    if isinstance(raw, dict) and isinstance(raw.get("offsetTable"), list):
        for e in raw["offsetTable"]:
            out[MessageQueue.from_json(e)] = int(e["offset"])
        return out
    # J form: scan '{...}:number' pairs
    import re

    for m in re.finditer(r"(\{[^{}]*\})\s*:\s*(-?\d+)", text):
        try:
            out[MessageQueue.from_json(json.loads(m.group(1)))] = int(m.group(2))
        except (ValueError, KeyError):
            continue
    return out


LANGUAGE = LanguageCode.PYTHON
