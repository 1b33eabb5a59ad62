"""``MessagingService`` (apache.rocketmq.v2) on the broker's services: the RPC adapters of the RocketMQ 5 gRPC
endpoint, like RocketMQ 5's proxy in local mode. Each RPC decodes its request, calls a broker service (topics,
groups, client registry, store, schedule, transactions, ``PopService``) and builds the response; business errors
travel in ``status`` with gRPC OK, as the clients expect (docs/reference/grpc_v5.md §2–§4).

============================== ==============================================================================
RPC                            behaviour
============================== ==============================================================================
QueryRoute                     one MessageQueue per queue id of this broker, endpoints = brokerIP1:grpcPort;
                               accept_message_types = all four (topics here are MIXED); unknown → 40402;
                               system topics → 40002
Heartbeat                      needs the client's Settings (Telemetry) first, else 40015; registers the
                               producer (group = each publishing topic) or the consumer group (CONSUME_POP)
Telemetry                      stores Settings, replies merged Settings (max_body_size, backoff, fifo, polling);
                               carries RecoverOrphanedTransactionCommand to the client
SendMessage                    one entry per message; queue = hash(message_group) or round robin; delivery_timestamp
                               → TIMER_DELIVER_MS, the timer (exact, no delay level); TRANSACTION → half message
QueryAssignment                queue -1 per broker (non-FIFO group) or every readable queue (FIFO group)
ReceiveMessage                 status, messages, delivery_timestamp; long-polls within the deadline; the consumer
                               checks (broker/topic readable, group) are ``broker.services.consume``'s, as a
                               remoting pull's, refused with J's remark (``consume_code``); the filter
                               is TAG or SQL92 (J's POP path does not check ``enablePropertyFilter``); a bad
                               SQL92 → 50001 "parse the consumer's subscription failed" (J's POP, through the
                               proxy), another bad filter → 40010
AckMessage                     per entry; stale/expired handle → 40013
ChangeInvisibleDuration        new receipt handle
ForwardMessageToDeadLetterQueue %DLQ%<group>, acked
EndTransaction                 COMMIT / ROLLBACK of the half named by transaction_id
NotifyClientTermination        unregisters the client and closes its channel
PullMessage, UpdateOffset, …   UNIMPLEMENTED (as proxy 5.3.2)
============================== ==============================================================================
"""

from __future__ import annotations

import asyncio
import ipaddress
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import grpc
import structlog
from google.protobuf.duration_pb2 import Duration

from broker import topics as T
from broker.config import BrokerConfig
from broker.filter import SubscriptionParseError, build_subscription
from broker.proxy.acl import GrpcAcl
from broker.proxy.channel import GrpcClientChannel, parse_transaction_id, transaction_id
from broker.proxy.convert import InvalidMessage, Limits, expression_type, from_v2, to_v2
from broker.proxy.pb import definition_pb2 as pb
from broker.proxy.pb import service_pb2 as spb
from broker.proxy.pb import service_pb2_grpc as spb_grpc
from broker.proxy.pop_service import PopRequest, PopService
from broker.proxy.pop_state import HandleStatus
from broker.proxy.send_codes import STORED_CODE, refused_code
from broker.proxy.sessions import ClientError, ClientSessions, Context, status
from broker.services.client_registry import ClientChannel, CompiledSubscription
from broker.services.consume import ConsumeRefusal, ConsumeRefused, ConsumeRequest, ConsumeService
from broker.services.group_state import GroupStateTables
from broker.services.send import SendOutcome, SendRefused, SendService
from broker.services.transactions import TransactionError, TransactionService

_log = structlog.get_logger("rocketq.broker.proxy")


# 4.x names (RocketMQ 5 says CONSUME_POP, which 4.x mqadmin and Dashboard cannot decode): a simple consumer
# receives actively, a push consumer passively
_CONSUME_TYPE = {pb.ClientType.SIMPLE_CONSUMER: "CONSUME_ACTIVELY"}


def _duration_ms(d: Duration) -> int:
    return int(d.seconds * 1000 + d.nanos // 1_000_000)  # protobuf is untyped here (ignore_missing_imports)


def _ms_duration(ms: int) -> Duration:
    d = Duration()
    d.FromMilliseconds(ms)
    return d


# the consume service's refusals as v2 codes (RocketMQ 5's proxy: ResponseBuilder); the message is J's remark
_CONSUME_CODE: dict[ConsumeRefusal, int] = {
    ConsumeRefusal.BROKER_UNREADABLE: pb.Code.FORBIDDEN,
    ConsumeRefusal.NO_GROUP: pb.Code.CONSUMER_GROUP_NOT_FOUND,
    ConsumeRefusal.GROUP_DISABLED: pb.Code.FORBIDDEN,
    ConsumeRefusal.NO_TOPIC: pb.Code.TOPIC_NOT_FOUND,
    ConsumeRefusal.TOPIC_UNREADABLE: pb.Code.FORBIDDEN,
    ConsumeRefusal.QUEUE_ID: pb.Code.BAD_REQUEST,
    ConsumeRefusal.BAD_SUBSCRIPTION: pb.Code.ILLEGAL_FILTER_EXPRESSION,
    ConsumeRefusal.NO_CONSUMER: pb.Code.PRECONDITION_FAILED,
    ConsumeRefusal.NO_BROADCAST: pb.Code.FORBIDDEN,
    ConsumeRefusal.NO_SUBSCRIPTION: pb.Code.PRECONDITION_FAILED,
    ConsumeRefusal.STALE_SUBSCRIPTION: pb.Code.PRECONDITION_FAILED,
    ConsumeRefusal.NO_FILTER_DATA: pb.Code.ILLEGAL_FILTER_EXPRESSION,
    ConsumeRefusal.NO_PROPERTY_FILTER: pb.Code.UNSUPPORTED,
}


def consume_code(exc: ConsumeRefused) -> int:
    """The v2 code of a consumer's request the consume service refused."""
    return _CONSUME_CODE[exc.reason]  # total: a test holds a row for every ConsumeRefusal


class MessagingService(spb_grpc.MessagingServiceServicer):
    def __init__(
        self,
        config: BrokerConfig,
        tables: GroupStateTables,
        sends: SendService,
        consume: ConsumeService,
        transactions: TransactionService,
        pop: PopService,
        endpoint: Callable[[], tuple[str, int]],
        acl: GrpcAcl | None = None,
    ) -> None:
        self._sends = sends  # the send and consume services, shared with the remoting front end
        self._consume = consume
        self._cfg = config.proxy
        self._broker_name = config.identity.broker_name
        self._max_body = config.store.max_message_size
        self._store, self._topics, self._groups, _, self._clients = tables
        self._levels = config.store.delay_levels_ms
        self._tx = transactions
        self._pop = pop
        self._endpoint = endpoint
        self._sessions = ClientSessions(acl)  # acl None: no authentication (aclEnable=false)
        p = config.proxy
        self._limits = Limits(
            self._max_body, p.user_property_max_num, p.max_user_property_size, p.max_message_group_size,
            p.max_delay_time_mills,
        )  # fmt: skip

    def set_acl(self, acl: GrpcAcl | None) -> None:
        """Authenticate and authorise every request with ``acl`` (the broker's ACL rules), or stop checking (None)."""
        self._sessions.acl = acl

    def is_connected(self, client_id: str) -> bool:
        return self._sessions.is_connected(client_id)

    def close_all(self) -> None:
        self._sessions.close_all()

    def _register(self, chan: GrpcClientChannel, group: str = "") -> None:
        """Register the client with the client registry from its settings (Heartbeat, and Settings on Telemetry)."""
        s = chan.settings
        if s is None:
            raise ClientError(pb.Code.UNRECOGNIZED_CLIENT_TYPE, "cannot find client settings for this client")
        info = ClientChannel(chan, chan.client_id, chan.language, 0)
        if s.client_type == pb.ClientType.PRODUCER:
            for topic in s.publishing.topics:
                self._clients.register_producer(topic.name, info)
            return
        group = group or s.subscription.group.name
        if not group:
            raise ClientError(pb.Code.ILLEGAL_CONSUMER_GROUP, "consumer group is required")
        sub_group = self._groups.find_or_create(group)
        if sub_group is None:
            raise ClientError(pb.Code.CONSUMER_GROUP_NOT_FOUND, f"consumer group {group} not found")
        # as a remoting heartbeat does (and J's proxy, whose heartbeat is one): mqadmin finds groups by this topic
        self._topics.create_if_absent(T.retry_topic(group), sub_group.retry_queue_nums, T.PERM_RW)
        subs: list[CompiledSubscription] = []
        for entry in s.subscription.subscriptions:
            expr = entry.expression
            try:
                subs.append(build_subscription(entry.topic.name, expr.expression or "*", 0, expression_type(expr)))
            except SubscriptionParseError as exc:
                raise ClientError(pb.Code.ILLEGAL_FILTER_EXPRESSION, str(exc)) from None
            self._pop.ensure_group(group, entry.topic.name)
        self._clients.register_consumer(
            group,
            info,
            _CONSUME_TYPE.get(s.client_type, "CONSUME_PASSIVELY"),
            "CLUSTERING",
            "CONSUME_FROM_LAST_OFFSET",
            subs,
            notify=False,
        )

    # -- helpers ---------------------------------------------------------------------------------------------------

    def _endpoints(self) -> pb.Endpoints:
        host, port = self._endpoint()
        try:
            ipaddress.IPv4Address(host)
            scheme = pb.AddressScheme.IPv4
        except ValueError:
            scheme = pb.AddressScheme.DOMAIN_NAME
        return pb.Endpoints(scheme=scheme, addresses=[pb.Address(host=host, port=port)])

    def _queue(self, topic: str, qid: int, perm: int) -> pb.MessageQueue:
        mq = pb.MessageQueue(id=qid, permission=perm)  # type: ignore[arg-type]
        mq.topic.name = topic
        mq.broker.name = self._broker_name
        mq.broker.id = 0
        mq.broker.endpoints.CopyFrom(self._endpoints())
        mq.accept_message_types.extend(
            [pb.MessageType.NORMAL, pb.MessageType.FIFO, pb.MessageType.DELAY, pb.MessageType.TRANSACTION]
        )
        return mq

    def _topic_group_call(self, context: Context, request: Any, *, reading: bool = False) -> tuple[Any, Any]:
        """A consumer's request on one topic: its session (and ACL) checked, then the names (gRPC's own checks),
        then what the consume service checks for both front ends."""
        self._sessions.session(context, request)
        return self._consumable(request.topic.name, request.group.name, reading=reading)

    def _consumable(self, topic: str, group: str, *, reading: bool) -> tuple[Any, Any]:
        self._topic_name(topic)
        if not group or T.group_error(group) is not None:
            raise ClientError(pb.Code.ILLEGAL_CONSUMER_GROUP, f"consumer group {group!r} is illegal")
        try:
            ok = self._consume.check(ConsumeRequest(group, topic, reading=reading))
        except ConsumeRefused as exc:
            raise ClientError(consume_code(exc), exc.remark) from None
        return ok.topic, ok.group

    def _topic_name(self, name: str) -> None:
        if not name or T.topic_error(name) is not None:
            raise ClientError(pb.Code.ILLEGAL_TOPIC, f"topic {name!r} is illegal")
        if name in self._topics.system_topic_names() or name.startswith(T.SYSTEM_TOPIC_PREFIX):
            raise ClientError(pb.Code.ILLEGAL_TOPIC, f"topic {name} is a system topic")

    def _topic(self, name: str) -> Any:
        self._topic_name(name)
        tc = self._topics.get(name)
        if tc is None:
            raise ClientError(pb.Code.TOPIC_NOT_FOUND, f"topic {name} not found")
        return tc

    def settings_reply(self, client: pb.Settings) -> pb.Settings:
        """Client settings merged with the server's values (proxy ``GrpcClientSettingsManager``)."""
        s = pb.Settings()
        s.CopyFrom(client)
        if client.HasField("publishing"):
            s.publishing.max_body_size = self._max_body
            s.publishing.validate_message_type = True
            bp = s.backoff_policy
            bp.Clear()
            bp.max_attempts = self._cfg.grpc_client_producer_max_attempts
            bp.exponential_backoff.initial.CopyFrom(_ms_duration(10))
            bp.exponential_backoff.max.CopyFrom(_ms_duration(1000))
            bp.exponential_backoff.multiplier = 2.0
        elif client.HasField("subscription"):
            g = self._groups.find_or_create(client.subscription.group.name) if client.subscription.group.name else None
            retry_max = g.retry_max_times if g is not None else 16
            bp = s.backoff_policy
            bp.Clear()
            bp.max_attempts = retry_max + 1
            bp.customized_backoff.next.extend(_ms_duration(ms) for ms in self._levels)
            s.subscription.fifo = bool(g is not None and g.consume_message_orderly)
            s.subscription.receive_batch_size = self._cfg.grpc_client_consumer_long_polling_batch_size
            if client.client_type != pb.ClientType.SIMPLE_CONSUMER or not client.subscription.HasField(
                "long_polling_timeout"
            ):
                s.subscription.long_polling_timeout.CopyFrom(
                    _ms_duration(self._cfg.grpc_client_consumer_max_long_polling_timeout_millis)
                )
        s.metric.Clear()
        s.metric.on = False
        return s

    # -- RPCs ----------------------------------------------------------------------------------------------------

    async def QueryRoute(self, request: spb.QueryRouteRequest, context: Context) -> spb.QueryRouteResponse:
        try:
            self._sessions.session(context, request)
            tc = self._topic(request.topic.name)
        except ClientError as exc:
            return spb.QueryRouteResponse(status=status(exc.code, str(exc)))
        r, w = tc.read_queue_nums, tc.write_queue_nums
        readable, writeable = T.is_readable(tc.perm), T.is_writeable(tc.perm)
        queues: list[pb.MessageQueue] = []
        name = tc.topic_name
        if r == w and readable and writeable:
            queues = [self._queue(name, i, pb.Permission.READ_WRITE) for i in range(r)]
        else:
            both = min(r, w) if readable and writeable else 0
            ro = [i for i in range(r) if readable and i >= both]
            wo = [i for i in range(w) if writeable and i >= both]
            queues.extend(self._queue(name, i, pb.Permission.READ) for i in ro)
            queues.extend(self._queue(name, i, pb.Permission.WRITE) for i in wo)
            queues.extend(self._queue(name, i, pb.Permission.READ_WRITE) for i in range(both))
            if not queues:
                queues = [self._queue(name, i, pb.Permission.NONE) for i in range(max(r, w))]
        return spb.QueryRouteResponse(status=status(pb.Code.OK), message_queues=queues)

    async def Heartbeat(self, request: spb.HeartbeatRequest, context: Context) -> spb.HeartbeatResponse:
        try:
            chan = self._sessions.session(context, request)
            self._register(chan, request.group.name if request.HasField("group") else "")
        except ClientError as exc:
            return spb.HeartbeatResponse(status=status(exc.code, str(exc)))
        return spb.HeartbeatResponse(status=status(pb.Code.OK))

    async def Telemetry(
        self, request_iterator: AsyncIterator[spb.TelemetryCommand], context: Context
    ) -> AsyncIterator[spb.TelemetryCommand]:
        try:
            chan = self._sessions.session(context)
        except ClientError as exc:
            yield spb.TelemetryCommand(status=status(exc.code, str(exc)))
            return
        outbox: asyncio.Queue[spb.TelemetryCommand | None] = asyncio.Queue()
        chan.add_stream(outbox)
        invalid: list[str] = []
        md, peer = self._sessions.metadata(context), self._sessions.peer(context)

        async def read() -> None:
            try:
                async for cmd in request_iterator:
                    if cmd.HasField("settings") and cmd.settings.WhichOneof("pub_sub") is None:
                        invalid.append("settings carry neither publishing nor subscription")  # PUBSUB_NOT_SET
                        break
                    if cmd.HasField("settings"):
                        try:
                            self._sessions.authorize(md, peer, cmd)
                        except ClientError as exc:
                            outbox.put_nowait(spb.TelemetryCommand(status=status(exc.code, str(exc))))
                            continue
                        chan.settings = cmd.settings
                        reply = spb.TelemetryCommand(status=status(pb.Code.OK))
                        reply.settings.CopyFrom(self.settings_reply(cmd.settings))
                        try:
                            self._register(chan)
                        except ClientError as exc:
                            reply.status.CopyFrom(status(exc.code, str(exc)))
                        outbox.put_nowait(reply)
            finally:
                outbox.put_nowait(None)

        reader = asyncio.get_running_loop().create_task(read(), name=f"telemetry-{chan.client_id}")
        try:
            while True:
                item = await outbox.get()
                if item is None:
                    break
                yield item
        finally:
            chan.remove_stream(outbox)
            reader.cancel()
        if invalid:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, invalid[0])

    async def SendMessage(self, request: spb.SendMessageRequest, context: Context) -> spb.SendMessageResponse:
        resp = spb.SendMessageResponse()
        try:
            chan = self._sessions.session(context, request)
            if not request.messages:
                raise ClientError(pb.Code.BAD_REQUEST, "no message to send")
            for m in request.messages:
                resp.entries.append(await self._send_one(m, chan))
        except ClientError as exc:
            resp.status.CopyFrom(status(exc.code, str(exc)))
            return resp
        codes = {e.status.code for e in resp.entries}
        if len(codes) == 1:
            resp.status.CopyFrom(resp.entries[0].status)
        else:
            resp.status.CopyFrom(status(pb.Code.MULTIPLE_RESULTS))
        return resp

    async def _send_one(self, m: pb.Message, chan: GrpcClientChannel) -> spb.SendResultEntry:
        """One message of a SendMessage: validated (``from_v2``), stored by the send service, answered."""
        entry = spb.SendResultEntry(message_id=m.system_properties.message_id)
        try:
            out = from_v2(m, self._limits, int(time.time() * 1000))
            outcome = await self._sends.send(out.request(chan.peer))
        except InvalidMessage as exc:
            entry.status.CopyFrom(status(exc.code, str(exc)))
            return entry
        except SendRefused as exc:
            entry.status.CopyFrom(status(refused_code(exc), exc.detail))
            return entry
        assert isinstance(outcome, SendOutcome)  # not deferred: the store waits
        result = outcome.result
        if not outcome.ok:  # stored, but not as durable as asked
            code = STORED_CODE.get(result.status, pb.Code.INTERNAL_SERVER_ERROR)
            entry.status.CopyFrom(status(code, result.remark or result.status.name))
            return entry
        item = result.items[0]
        entry.status.CopyFrom(status(pb.Code.OK))
        entry.offset = item.queue_offset
        if out.transactional:
            entry.transaction_id = transaction_id(item.queue_offset, item.wrote_offset)
        return entry

    async def QueryAssignment(
        self, request: spb.QueryAssignmentRequest, context: Context
    ) -> spb.QueryAssignmentResponse:
        try:
            tc, g = self._topic_group_call(context, request)
        except ClientError as exc:
            return spb.QueryAssignmentResponse(status=status(exc.code, str(exc)))
        if not T.is_readable(tc.perm) or tc.read_queue_nums == 0:
            return spb.QueryAssignmentResponse(status=status(pb.Code.FORBIDDEN, "no readable queue"))
        ids = range(tc.read_queue_nums) if g.consume_message_orderly else [-1]
        return spb.QueryAssignmentResponse(
            status=status(pb.Code.OK),
            assignments=[
                pb.Assignment(message_queue=self._queue(tc.topic_name, i, pb.Permission.READ_WRITE)) for i in ids
            ],
        )

    async def ReceiveMessage(
        self, request: spb.ReceiveMessageRequest, context: Context
    ) -> AsyncIterator[spb.ReceiveMessageResponse]:
        cfg = self._cfg
        try:
            chan = self._sessions.session(context, request)
            tc, g = self._consumable(request.message_queue.topic.name, request.group.name, reading=True)
            fe = request.filter_expression
            try:
                sub = self._consume.subscription(tc.topic_name, fe.expression, expression_type(fe))
            except ConsumeRefused as exc:
                if (
                    fe.type == pb.FilterType.SQL
                ):  # J: the broker's POP answers SUBSCRIPTION_PARSE_FAILED, the proxy 50001
                    raise ClientError(pb.Code.INTERNAL_SERVER_ERROR, exc.remark) from None
                raise ClientError(pb.Code.ILLEGAL_FILTER_EXPRESSION, exc.detail) from None
            if request.auto_renew or not request.HasField("invisible_duration"):
                invisible_ms = cfg.default_invisible_time_mills
            else:
                invisible_ms = _duration_ms(request.invisible_duration)
                if not cfg.min_invisible_time_mills_for_recv <= invisible_ms <= cfg.max_invisible_time_mills:
                    raise ClientError(
                        pb.Code.ILLEGAL_INVISIBLE_TIME,
                        f"the invisible time must be within [{cfg.min_invisible_time_mills_for_recv},"
                        f" {cfg.max_invisible_time_mills}] ms",
                    )
            poll_ms = self._polling_ms(request, context)
            if self._pop.held >= cfg.max_pop_polling_size:
                raise ClientError(pb.Code.TOO_MANY_REQUESTS, "polling full")
        except ClientError as exc:
            yield spb.ReceiveMessageResponse(status=status(exc.code, str(exc)))
            return
        batch = max(1, min(request.batch_size or 32, 1024))
        got = await self._pop.receive(
            PopRequest(
                g.group_name,
                tc.topic_name,
                sub.filter,
                batch,
                invisible_ms,
                g.consume_message_orderly,
                g.retry_max_times + 1,
                poll_ms / 1000,
                request.message_queue.id if g.consume_message_orderly else -1,
                chan.client_id if request.auto_renew else "",
            )
        )
        if not got:
            yield spb.ReceiveMessageResponse(status=status(pb.Code.MESSAGE_NOT_FOUND, "no new message"))
            return
        yield spb.ReceiveMessageResponse(status=status(pb.Code.OK))
        for p in got:
            e = p.entry
            yield spb.ReceiveMessageResponse(
                message=to_v2(p.message, receipt_handle=e.handle, attempt=e.attempt, queue_offset=e.queue_offset)
            )
        resp = spb.ReceiveMessageResponse()
        resp.delivery_timestamp.FromMilliseconds(int(time.time() * 1000))
        yield resp

    def _polling_ms(self, request: spb.ReceiveMessageRequest, context: Context) -> int:
        cfg = self._cfg
        lo = cfg.grpc_client_consumer_min_long_polling_timeout_millis
        hi = cfg.grpc_client_consumer_max_long_polling_timeout_millis
        remaining = context.time_remaining()
        remaining_ms = int(remaining * 1000) if remaining is not None else hi + 3000
        if request.HasField("long_polling_timeout"):
            want = _duration_ms(request.long_polling_timeout)
        else:
            want = remaining_ms - 1500
        want = max(lo, min(hi, want))
        # answer before the client's deadline: keep a margin for the reply to travel
        budget = remaining_ms - min(1000, remaining_ms // 4)
        if budget < lo:
            if budget <= 0:
                raise ClientError(pb.Code.ILLEGAL_POLLING_TIME, "the deadline leaves no time to poll")
            return budget
        return min(want, budget)

    async def AckMessage(self, request: spb.AckMessageRequest, context: Context) -> spb.AckMessageResponse:
        resp = spb.AckMessageResponse()
        try:
            tc, g = self._topic_group_call(context, request)
        except ClientError as exc:
            resp.status.CopyFrom(status(exc.code, str(exc)))
            return resp
        for e in request.entries:
            st = self._pop.ack(g.group_name, tc.topic_name, e.receipt_handle)
            out = spb.AckMessageResultEntry(message_id=e.message_id, receipt_handle=e.receipt_handle)
            out.status.CopyFrom(self._handle_status(st))
            resp.entries.append(out)
        codes = {e.status.code for e in resp.entries}
        if len(codes) == 1:
            resp.status.CopyFrom(resp.entries[0].status)
        elif not codes:
            resp.status.CopyFrom(status(pb.Code.OK))
        else:
            resp.status.CopyFrom(status(pb.Code.MULTIPLE_RESULTS))
        return resp

    @staticmethod
    def _handle_status(st: HandleStatus) -> pb.Status:
        if st is HandleStatus.OK:
            return status(pb.Code.OK)
        if st is HandleStatus.EXPIRED:
            return status(pb.Code.INVALID_RECEIPT_HANDLE, "receipt handle is expired")
        return status(pb.Code.INVALID_RECEIPT_HANDLE, "receipt handle is invalid")

    async def ChangeInvisibleDuration(
        self, request: spb.ChangeInvisibleDurationRequest, context: Context
    ) -> spb.ChangeInvisibleDurationResponse:
        try:
            tc, g = self._topic_group_call(context, request)
            ms = _duration_ms(request.invisible_duration)
            if not 0 <= ms <= self._cfg.max_invisible_time_mills:
                raise ClientError(pb.Code.ILLEGAL_INVISIBLE_TIME, "illegal invisible time")
        except ClientError as exc:
            return spb.ChangeInvisibleDurationResponse(status=status(exc.code, str(exc)))
        st, e = self._pop.change_invisible(g.group_name, tc.topic_name, request.receipt_handle, ms)
        if st is not HandleStatus.OK or e is None:
            return spb.ChangeInvisibleDurationResponse(status=self._handle_status(st))
        return spb.ChangeInvisibleDurationResponse(status=status(pb.Code.OK), receipt_handle=e.handle)

    async def ForwardMessageToDeadLetterQueue(
        self, request: spb.ForwardMessageToDeadLetterQueueRequest, context: Context
    ) -> spb.ForwardMessageToDeadLetterQueueResponse:
        try:
            tc, g = self._topic_group_call(context, request)
        except ClientError as exc:
            return spb.ForwardMessageToDeadLetterQueueResponse(status=status(exc.code, str(exc)))
        st = await self._pop.forward_handle_to_dlq(g.group_name, tc.topic_name, request.receipt_handle)
        return spb.ForwardMessageToDeadLetterQueueResponse(status=self._handle_status(st))

    async def EndTransaction(self, request: spb.EndTransactionRequest, context: Context) -> spb.EndTransactionResponse:
        try:
            self._sessions.session(context, request)
            tc = self._topic(request.topic.name)
            parsed = parse_transaction_id(request.transaction_id)
            if parsed is None:
                raise ClientError(
                    pb.Code.INVALID_TRANSACTION_ID, f"transaction id {request.transaction_id!r} is invalid"
                )
            qoff, phys = parsed
            if request.resolution == pb.TransactionResolution.COMMIT:
                await self._tx.commit(tc.topic_name, qoff, phys)
            elif request.resolution == pb.TransactionResolution.ROLLBACK:
                await self._tx.rollback(tc.topic_name, qoff, phys)
            else:
                raise ClientError(pb.Code.BAD_REQUEST, "transaction resolution is required")
        except ClientError as exc:
            return spb.EndTransactionResponse(status=status(exc.code, str(exc)))
        except TransactionError as exc:
            return spb.EndTransactionResponse(status=status(pb.Code.INVALID_TRANSACTION_ID, str(exc)))
        return spb.EndTransactionResponse(status=status(pb.Code.OK))

    async def NotifyClientTermination(
        self, request: spb.NotifyClientTerminationRequest, context: Context
    ) -> spb.NotifyClientTerminationResponse:
        try:
            chan = self._sessions.session(context, request)
        except ClientError as exc:
            return spb.NotifyClientTerminationResponse(status=status(exc.code, str(exc)))
        chan.close()
        return spb.NotifyClientTerminationResponse(status=status(pb.Code.OK))
