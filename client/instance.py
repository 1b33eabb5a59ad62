"""ClientInstance: the connections, routes and timers shared by the producers and consumers of one client id.

* Client id ``ip@instanceName`` as RocketMQ forms it. The instance name defaults to the process id (``DEFAULT`` for
  broadcasting consumers, whose local offset files must outlive the process, as in J). Brokers tell consumers
  apart by client id, so when a second instance in this process would get an id that a live one holds, it gets
  ``#2``, ``#3``… appended (J appends a nano time instead).
* Name servers ``"a:9876;b:9876"``: route lookups go to the one that answered last and fail over to the others.
* Route refresh every ``poll_namesrv_interval`` (30 s) and on demand (``get_route(refresh=True)`` after
  TOPIC_NOT_EXIST or another route error); heartbeats every ``heartbeat_broker_interval`` (30 s) to every broker
  in the routes of the topics its members use. A route that changed makes the consumers of the topic rebalance.
* Requests from brokers (NOTIFY_CONSUMER_IDS_CHANGED, RESET_CONSUMER_CLIENT_OFFSET, GET_CONSUMER_RUNNING_INFO,
  GET_CONSUMER_STATUS_FROM_CLIENT, CONSUME_MESSAGE_DIRECTLY, CHECK_TRANSACTION_STATE) go to the member registered
  for the group; PUSH_REPLY_MESSAGE_TO_CLIENT (request-reply answers) to ``replies`` (``client.reply``). CONSUME_MESSAGE_DIRECTLY is answered only by push consumers (``DirectConsumer``), as in J.

Sharing is explicit: pass one instance to several clients (``Producer(..., instance=inst)``) and they share its
connections and timers; the instance stops when the last of them closes.
"""

from __future__ import annotations

import asyncio
import os
import socket
import weakref
from collections.abc import Awaitable
from typing import Any, Protocol, runtime_checkable

from client._aio import every, log_stop_failure
from client._log import get_logger
from client.api import ClientAPI
from client.config import ClientConfig
from client.errors import NoBrokerAvailableError, RouteNotFoundError
from client.message import MessageQueue
from client.reply import ReplyFutures
from client.route import TopicRoute
from protocol.acl.signature import SessionCredentials
from protocol.bodies import (
    ConsumeMessageDirectlyResult,
    ConsumerData,
    HeartbeatData,
    ProducerData,
    decode_reset_offset_body,
)
from protocol.codes import RequestCode, ResponseCode
from protocol.command import RemotingCommand
from protocol.errors import RemotingError
from protocol.headers import (
    CheckTransactionStateRequestHeader,
    GetConsumerRunningInfoRequestHeader,
    GetConsumerStatusRequestHeader,
    NotifyConsumerIdsChangedRequestHeader,
    ResetOffsetRequestHeader,
)
from protocol.message_ext import MessageExt
from protocol.message_properties import PropertyKey
from protocol.record import RecordError
from protocol.record_decode import decode_record, decode_records
from protocol.remoting.client import RemotingClient
from protocol.remoting.handler import Channel, HandlerError, HandlerRegistry, MissingFieldError, RequestContext
from protocol.remoting.tls import client_context
from runtime.tasks import stop_tasks

_log = get_logger("rocketq.client")

REHEARTBEAT_ATTEMPTS = 8  # after a broker connection drops: 0.2 s, 0.4 s … then every 5 s


class ProducerMember(Protocol):
    group: str

    def topics(self) -> set[str]: ...

    async def check_transaction(self, channel: Channel, h: CheckTransactionStateRequestHeader, msg: MessageExt) -> None:
        """Answer a broker's CHECK_TRANSACTION_STATE (END_TRANSACTION on ``channel``)."""


class ConsumerMember(Protocol):
    group: str

    def topics(self) -> set[str]: ...

    def heartbeat_data(self) -> ConsumerData: ...

    def rebalance_soon(self) -> None: ...

    async def reset_offsets(self, topic: str, offsets: dict[MessageQueue, int]) -> None: ...

    def running_info(self, jstack: bool = False) -> bytes: ...

    def consumer_status(self, topic: str) -> dict[MessageQueue, int]:
        """The consumed offsets of the owned queues of ``topic`` (GET_CONSUMER_STATUS_FROM_CLIENT)."""


@runtime_checkable
class DirectConsumer(Protocol):
    """A consumer that can run its listener on one given message (push consumers; J checks ``instanceof
    DefaultMQPushConsumerImpl``)."""

    async def consume_message_directly(self, msg: MessageExt) -> ConsumeMessageDirectlyResult: ...


def local_ip() -> str:
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect(("10.255.255.255", 1))  # a UDP connect sends nothing
            ip: str = s.getsockname()[0]
            return ip
    except OSError:
        return "127.0.0.1"


# client id → the live instance holding it; only to keep ids unique within the process (never for sharing)
_live_ids: weakref.WeakValueDictionary[str, ClientInstance] = weakref.WeakValueDictionary()


def _unique_client_id(ip: str, instance_name: str) -> tuple[str, str]:
    name = instance_name
    n = 1
    while f"{ip}@{name}" in _live_ids:
        n += 1
        name = f"{instance_name}#{n}"
    return f"{ip}@{name}", name


class _RouteMap(dict[str, TopicRoute]):
    """``ClientInstance.routes``: a dict that keeps, as routes come and go, how many routes name each broker address
    (masters, and every address), so ``heartbeat_addrs()`` costs the brokers, not the topics."""

    def __init__(self) -> None:
        super().__init__()
        self.masters: dict[str, int] = {}
        self.addrs: dict[str, int] = {}

    def _count(self, route: TopicRoute | None, sign: int) -> None:
        if route is None:
            return
        for bd in route.brokers.values():
            for addr in bd.broker_addrs.values():
                _bump(self.addrs, addr, sign)
            if bd.master_addr:
                _bump(self.masters, bd.master_addr, sign)

    def __setitem__(self, key: str, value: TopicRoute) -> None:
        self._count(self.get(key), -1)
        self._count(value, 1)
        super().__setitem__(key, value)

    def __delitem__(self, key: str) -> None:
        self._count(self.get(key), -1)
        super().__delitem__(key)

    def pop(self, key: str, *default: Any) -> Any:
        self._count(self.get(key), -1)
        return super().pop(key, *default)

    def popitem(self) -> tuple[str, TopicRoute]:
        key, route = super().popitem()
        self._count(route, -1)
        return key, route

    def clear(self) -> None:
        self.masters.clear()
        self.addrs.clear()
        super().clear()

    def update(self, *args: Any, **kwargs: Any) -> None:
        for key, route in dict(*args, **kwargs).items():
            self[key] = route

    def setdefault(self, key: str, default: Any = None) -> Any:
        if key not in self:
            self[key] = default
        return self[key]


def _bump(counts: dict[str, int], addr: str, sign: int) -> None:
    n = counts.get(addr, 0) + sign
    if n > 0:
        counts[addr] = n
    else:
        counts.pop(addr, None)


class ClientInstance:
    """``ClientInstance("a:9876;b:9876", instance_name="x")`` (any ``ClientConfig`` field as an option) or
    ``ClientInstance(config=ClientConfig(...))``."""

    def __init__(
        self,
        namesrv_addr: str | None = None,
        *,
        config: ClientConfig | None = None,
        default_instance_name: str | None = None,
        **options: Any,
    ) -> None:
        if config is None:
            fields = {"namesrv_addr": namesrv_addr, **options}
            config = ClientConfig(**{k: v for k, v in fields.items() if v is not None})
        elif namesrv_addr is not None or options:
            config = config.model_copy(update={"namesrv_addr": namesrv_addr or config.namesrv_addr, **options})
        self.config = config
        self.namesrv_addrs = self.config.namesrv_addrs
        self.client_ip = self.config.client_ip or local_ip()
        base_name = self.config.instance_name or default_instance_name or str(os.getpid())
        self.client_id, self.instance_name = _unique_client_id(self.client_ip, base_name)
        _live_ids[self.client_id] = self
        self.request_timeout = self.config.request_timeout
        registry = HandlerRegistry()
        registry.register(RequestCode.NOTIFY_CONSUMER_IDS_CHANGED, self._on_notify_ids_changed)
        registry.register(RequestCode.RESET_CONSUMER_CLIENT_OFFSET, self._on_reset_offset)
        registry.register(RequestCode.GET_CONSUMER_RUNNING_INFO, self._on_running_info)
        registry.register(RequestCode.CHECK_TRANSACTION_STATE, self._on_check_transaction)
        registry.register(RequestCode.GET_CONSUMER_STATUS_FROM_CLIENT, self._on_consumer_status)
        registry.register(RequestCode.CONSUME_MESSAGE_DIRECTLY, self._on_consume_directly)
        self.replies = ReplyFutures()  # request-reply: requests of this instance's producers awaiting their answer
        registry.register(RequestCode.PUSH_REPLY_MESSAGE_TO_CLIENT, self.replies.on_push)
        creds = (
            SessionCredentials(self.config.access_key, self.config.secret_key, self.config.security_token)
            if self.config.access_key and self.config.secret_key
            else None
        )
        self.remoting = RemotingClient(
            registry,
            connect_timeout=self.config.connect_timeout,
            on_connection_closed=self._on_connection_closed,
            rpc_hook=creds.sign if creds is not None else None,
            ssl_context=(
                client_context(
                    trust_cert_path=self.config.tls_trust_cert_path or "",
                    cert_path=self.config.tls_cert_path or "",
                    key_path=self.config.tls_key_path or "",
                )
                if self.config.use_tls
                else None
            ),
        )
        self.api = ClientAPI(self.remoting, self.config.serialize)
        self.routes: dict[str, TopicRoute] = _RouteMap()
        self.pull_from_which: dict[MessageQueue, int] = {}  # suggestWhichBrokerId of the last pull reply
        self.producers: dict[str, ProducerMember] = {}
        self.consumers: dict[str, ConsumerMember] = {}
        self._ns_index = 0
        self._tasks: list[asyncio.Task[None]] = []
        self._background: set[asyncio.Task[None]] = set()
        self._users = 0
        self._started = False

    @property
    def started(self) -> bool:
        return self._started

    # -- lifecycle -------------------------------------------------------------------------------------------------

    async def start(self) -> None:
        """Count one more user; the first starts the route-refresh and heartbeat timers."""
        self._users += 1
        if self._started:
            return
        self._started = True
        _live_ids[self.client_id] = self
        loop = asyncio.get_running_loop()
        self._tasks = [
            loop.create_task(
                every(self.config.poll_namesrv_interval, self.refresh_routes, "route refresh failed"),
                name="route-refresh",
            ),
            loop.create_task(
                every(self.config.heartbeat_broker_interval, self.send_heartbeat_to_all, "heartbeat failed"),
                name="heartbeat",
            ),
        ]
        _log.debug("client instance started", client_id=self.client_id, namesrv=self.namesrv_addrs)

    async def close(self) -> None:
        """Count one user less; the last stops the timers and closes every connection."""
        self._users = max(0, self._users - 1)
        if self._users > 0 or not self._started:
            return
        self._started = False
        await stop_tasks(*self._tasks, *self._background, on_error=log_stop_failure)
        self._tasks = []
        self._background.clear()
        await self.remoting.close()
        if _live_ids.get(self.client_id) is self:
            del _live_ids[self.client_id]
        _log.debug("client instance closed", client_id=self.client_id)

    def spawn(self, coro: Awaitable[None], name: str) -> None:
        """Run ``coro`` in the background; cancelled at close if still running."""

        async def run() -> None:
            try:
                await coro
            except Exception as exc:
                _log.warning("background task failed", task=name, error=str(exc))

        task = asyncio.get_running_loop().create_task(run(), name=name)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    def register_producer(self, member: ProducerMember) -> None:
        if self.producers.get(member.group, member) is not member:
            raise ValueError(f"producer group {member.group} is already registered in client {self.client_id}")
        self.producers[member.group] = member

    def register_consumer(self, member: ConsumerMember) -> None:
        if self.consumers.get(member.group, member) is not member:
            raise ValueError(f"consumer group {member.group} is already registered in client {self.client_id}")
        self.consumers[member.group] = member

    def unregister_producer(self, member: ProducerMember) -> None:
        if self.producers.get(member.group) is member:
            del self.producers[member.group]

    def unregister_consumer(self, member: ConsumerMember) -> None:
        if self.consumers.get(member.group) is member:
            del self.consumers[member.group]

    # -- routes ----------------------------------------------------------------------------------------------------

    async def fetch_route(self, topic: str) -> TopicRoute | None:
        """Ask the name servers (the last good one first) for a topic's route; None if it does not exist."""
        last_exc: Exception | None = None
        n = len(self.namesrv_addrs)
        for i in range(n):
            idx = (self._ns_index + i) % n
            addr = self.namesrv_addrs[idx]
            try:
                route = await self.api.get_route(addr, topic, self.request_timeout)
            except RemotingError as exc:
                _log.info("name server failed, trying the next", namesrv=addr, error=str(exc))
                last_exc = exc
                continue
            self._ns_index = idx
            return route
        assert last_exc is not None
        raise last_exc

    async def get_route(self, topic: str, *, refresh: bool = False) -> TopicRoute | None:
        if not refresh and topic in self.routes:
            return self.routes[topic]
        route = await self.fetch_route(topic)
        if route is None:
            return None
        old = self.routes.get(topic)
        self.routes[topic] = route
        if old is not None and old != route:
            _log.info("topic route changed", topic=topic)
            for c in self.consumers.values():
                if topic in c.topics():
                    c.rebalance_soon()
        return route

    async def require_route(self, topic: str, *, refresh: bool = False) -> TopicRoute:
        route = await self.get_route(topic, refresh=refresh)
        if route is None:
            raise RouteNotFoundError(f"No route info of this topic: {topic}")
        return route

    async def refresh_routes(self) -> None:
        topics: set[str] = set()
        for p in self.producers.values():
            topics |= p.topics()
        for c in self.consumers.values():
            topics |= c.topics()
        for topic in sorted(topics):
            try:
                await self.get_route(topic, refresh=True)
            except RemotingError as exc:
                _log.warning("route refresh failed", topic=topic, error=str(exc))

    async def fetch_topic_list(self) -> list[str]:
        last_exc: Exception | None = None
        for i in range(len(self.namesrv_addrs)):
            addr = self.namesrv_addrs[(self._ns_index + i) % len(self.namesrv_addrs)]
            try:
                return await self.api.get_topic_list(addr, self.request_timeout)
            except RemotingError as exc:
                last_exc = exc
        assert last_exc is not None
        raise last_exc

    def broker_addr(self, broker_name: str, *, master_only: bool = True) -> str | None:
        for route in self.routes.values():
            addr = route.master_addr(broker_name) if master_only else route.read_addr(broker_name)
            if addr:
                return addr
        return None

    def _subscribe_addr(self, mq: MessageQueue) -> tuple[str, int] | None:
        suggested = self.pull_from_which.get(mq, 0)
        own = self.routes.get(mq.topic)  # the queue's own route first: another topic's may be older
        if own is not None:  # the common case, once per pull: no list of routes built
            bd = own.brokers.get(mq.broker_name)
            found = bd.find_in_subscribe(suggested) if bd is not None else None
            if found is not None:
                return found
        for route in self.routes.values():
            if route is own:
                continue
            bd = route.brokers.get(mq.broker_name)
            found = bd.find_in_subscribe(suggested) if bd is not None else None
            if found is not None:
                return found
        return None

    async def find_pull_addr(self, mq: MessageQueue) -> tuple[str, bool]:
        """Where the next pull of ``mq`` goes (J ``PullAPIWrapper``): the broker id the last pull reply suggested
        (``suggestWhichBrokerId``, kept in ``pull_from_which``), else any replica of the group — so a consumer
        keeps reading from a slave while the master is gone. Returns the address and whether it is a slave."""
        found = self._subscribe_addr(mq)
        if found is None:
            await self.get_route(mq.topic, refresh=True)
            found = self._subscribe_addr(mq)
        if found is None:
            raise NoBrokerAvailableError(f"no address for broker {mq.broker_name} of topic {mq.topic}")
        return found[0], found[1] != 0

    async def find_broker_addr(self, mq: MessageQueue, *, master_only: bool = True) -> str:
        """The address of ``mq``'s broker (its master, or any replica when ``master_only`` is false)."""
        addr = self.broker_addr(mq.broker_name, master_only=master_only)
        if addr is None:
            await self.get_route(mq.topic, refresh=True)
            addr = self.broker_addr(mq.broker_name, master_only=master_only)
        if addr is None:
            raise NoBrokerAvailableError(f"no address for broker {mq.broker_name} of topic {mq.topic}")
        return addr

    # -- heartbeats ------------------------------------------------------------------------------------------------

    def heartbeat_body(self) -> dict[str, Any]:
        """The HEART_BEAT body (``protocol.bodies.HeartbeatData``) as its JSON object."""
        return HeartbeatData(
            client_id=self.client_id,
            producer_data_set=[ProducerData(group_name=g) for g in sorted(self.producers)],
            consumer_data_set=[c.heartbeat_data() for _g, c in sorted(self.consumers.items())],
        ).to_json()

    def heartbeat_addrs(self) -> set[str]:
        """Masters of every known broker, and their replicas too when there are consumers (they may pull there).

        Kept up to date by ``routes`` itself: a producer heartbeats on its first send to each topic, and walking 10k
        routes each time made the first sends to 10k topics quadratic (issue #21)."""
        routes = self.routes
        if isinstance(routes, _RouteMap):
            return set(routes.addrs if self.consumers else routes.masters)
        addrs: set[str] = set()
        for route in routes.values():
            for bd in route.brokers.values():
                if self.consumers:
                    addrs.update(bd.broker_addrs.values())
                elif bd.master_addr:
                    addrs.add(bd.master_addr)
        return addrs

    async def send_heartbeat_to_all(self) -> None:
        if not self.producers and not self.consumers:
            return
        body = self.heartbeat_body()
        addrs = sorted(self.heartbeat_addrs())
        results = await asyncio.gather(
            *(self.api.heartbeat(a, body, self.request_timeout) for a in addrs), return_exceptions=True
        )
        for addr, res in zip(addrs, results, strict=True):
            if isinstance(res, Exception):
                _log.warning("heartbeat failed", broker=addr, error=str(res))

    def _on_connection_closed(self, addr: str) -> None:
        """A broker connection dropped (restart, network): heartbeat it again as soon as it answers, so it knows
        our groups (rebalance lists, pull subscriptions, check-backs) before the next 30 s round."""
        if self._started and addr in self.heartbeat_addrs() and (self.producers or self.consumers):
            self.spawn(self._reheartbeat(addr), name=f"reheartbeat-{addr}")

    async def _reheartbeat(self, addr: str) -> None:
        for attempt in range(REHEARTBEAT_ATTEMPTS):
            await asyncio.sleep(min(0.2 * 2**attempt, 5.0))
            if not self._started:
                return
            try:
                await self.api.heartbeat(addr, self.heartbeat_body(), self.request_timeout)
            except RemotingError:
                continue
            _log.info("broker reconnected; heartbeat sent", broker=addr)
            for c in self.consumers.values():
                c.rebalance_soon()
            return

    async def unregister_from_brokers(self, producer_group: str | None, consumer_group: str | None) -> None:
        addrs = sorted(self.heartbeat_addrs())
        await asyncio.gather(
            *(
                self.api.unregister_client(a, self.client_id, producer_group, consumer_group, self.request_timeout)
                for a in addrs
            ),
            return_exceptions=True,
        )

    # -- requests from brokers -------------------------------------------------------------------------------------

    async def _on_notify_ids_changed(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand | None:
        h = NotifyConsumerIdsChangedRequestHeader.from_ext_fields(cmd.ext_fields)
        consumer = self.consumers.get(h.consumer_group)
        if consumer is not None:
            _log.info("consumer ids changed, rebalancing now", group=h.consumer_group, broker=ctx.conn.peer)
            consumer.rebalance_soon()
        return None

    async def _on_reset_offset(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand | None:
        h = ResetOffsetRequestHeader.from_ext_fields(cmd.ext_fields)
        consumer = self.consumers.get(h.group)
        if consumer is not None and cmd.body:
            table = decode_reset_offset_body(cmd.body)
            offsets = {MessageQueue(t, b, q): off for (t, b, q), off in table.items() if t == h.topic}
            _log.info("offsets reset by broker", group=h.group, topic=h.topic, queues=len(offsets))
            await consumer.reset_offsets(h.topic, offsets)
        return cmd.make_response()

    async def _on_running_info(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand | None:
        h = GetConsumerRunningInfoRequestHeader.from_ext_fields(cmd.ext_fields)
        consumer = self.consumers.get(h.consumer_group)
        if consumer is None:
            return cmd.make_response(ResponseCode.SYSTEM_ERROR, f"The Consumer Group <{h.consumer_group}> not exist")
        return cmd.make_response(body=consumer.running_info(h.jstack_enable))

    async def _on_consumer_status(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand | None:
        h = GetConsumerStatusRequestHeader.from_ext_fields(cmd.ext_fields)
        consumer = self.consumers.get(h.group)
        table = consumer.consumer_status(h.topic) if consumer is not None else {}
        return cmd.make_response(body=ClientAPI.encode_consumer_status(table))

    async def _on_consume_directly(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand | None:
        """Ext fields consumerGroup (required), clientId, msgId, brokerName; the body is one stored record (the
        first is used, as J's ``MessageDecoder.decode`` does)."""
        group = cmd.ext_fields.get("consumerGroup")
        if group is None:
            raise MissingFieldError("consumerGroup")
        try:
            msg, _end = decode_record(cmd.body, decompress=True)
        except RecordError as exc:
            raise HandlerError(ResponseCode.SYSTEM_ERROR, f"the message record does not decode: {exc}") from None
        consumer = self.consumers.get(group)
        if not isinstance(consumer, DirectConsumer):
            return cmd.make_response(
                ResponseCode.SYSTEM_ERROR, f"The Consumer Group <{group}> not exist in this consumer"
            )
        _log.info(
            "consume message directly",
            group=group,
            msg_id=cmd.ext_fields.get("msgId"),
            broker_name=cmd.ext_fields.get("brokerName"),
            broker=ctx.conn.peer,
        )
        result = await consumer.consume_message_directly(msg)
        return cmd.make_response(body=result.encode())

    async def _on_check_transaction(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand | None:
        h = CheckTransactionStateRequestHeader.from_ext_fields(cmd.ext_fields)
        msgs = decode_records(cmd.body, decompress=True) if cmd.body else []
        if not msgs:
            _log.warning("CHECK_TRANSACTION_STATE without a message", broker=ctx.conn.peer)
            return None
        group = msgs[0].properties.get(PropertyKey.PRODUCER_GROUP, "")
        producer = self.producers.get(group)
        if producer is None:
            _log.warning("CHECK_TRANSACTION_STATE for an unknown producer group", group=group)
            return None
        self.spawn(producer.check_transaction(ctx.conn, h, msgs[0]), name=f"check-transaction-{group}")
        return None
