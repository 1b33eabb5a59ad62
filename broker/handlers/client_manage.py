"""Client membership requests: HEART_BEAT, UNREGISTER_CLIENT, GET_CONSUMER_LIST_BY_GROUP, CHECK_CLIENT_CONFIG.

HEART_BEAT (J ``ClientManageProcessor.heartBeat``): for each consumer group, find or auto-create the subscription
group, create its ``%RETRY%<group>`` topic (retryQueueNums queues, perm RW), and register the channel with its
subscriptions (the tag codes are recomputed from the tag strings — C++ sends ``codeSet: [0,0]``); for each producer
group, register the channel. The body is parsed by ``protocol.bodies.HeartbeatData`` (C++ enum ordinals, J/ali-ons
names, C++'s trailing newline). The reply is SUCCESS with no body; when the heartbeat created a retry topic it goes
out once the name servers know that topic (J registers it first; ``TopicConfigTable.registered``). A SQL92 subscription is compiled here; one that
does not compile is kept without a selector (J: no ConsumerFilterData), so its pulls answer FILTER_DATA_NOT_EXIST.

CHECK_CLIENT_CONFIG (J ``ClientManageProcessor.checkClientConfig``; the J consumer sends it for each non-TAG
subscription before it starts): a TAG subscription (or no body) → SUCCESS; ``enablePropertyFilter=false`` →
SYSTEM_ERROR "The broker does not support consumer to filter message by SQL92"; an expression that does not compile →
SUBSCRIPTION_PARSE_FAILED with the compiler's message (J's ``MQFilterException.getMessage()``).
"""

from __future__ import annotations

import time

from broker import topics as T
from broker.filter import (
    SQL92,
    SubscriptionParseError,
    build_subscription,
    compile_sql,
    is_tag_type,
    unparsed_subscription,
)
from broker.handlers._common import decode_header
from broker.services.client_registry import ClientChannel, ClientRegistry, CompiledSubscription
from broker.services.subscription_groups import SubscriptionGroupTable
from broker.services.topic_config import TopicConfigTable
from protocol.bodies import (
    BodyDecodeError,
    CheckClientRequestBody,
    HeartbeatData,
    SubscriptionData,
    encode_consumer_list,
)
from protocol.codes import RequestCode, ResponseCode
from protocol.command import RemotingCommand
from protocol.headers import GetConsumerListByGroupRequestHeader, UnregisterClientRequestHeader
from protocol.remoting.handler import Handler, HandlerError, RequestContext


def _subscriptions(consumer_subs: list[SubscriptionData]) -> list[CompiledSubscription]:
    out = []
    for s in consumer_subs:
        try:
            out.append(build_subscription(s.topic, s.sub_string, int(s.sub_version or 0), s.expression_type or "TAG"))
        except SubscriptionParseError:
            out.append(unparsed_subscription(s.topic, s.sub_string, s.expression_type))
    return out


class ClientManageHandlers:
    def __init__(
        self,
        clients: ClientRegistry,
        groups: SubscriptionGroupTable,
        topics: TopicConfigTable,
        *,
        enable_property_filter: bool = False,
    ) -> None:
        self._property_filter = enable_property_filter
        self._clients = clients
        self._groups = groups
        self._topics = topics

    def table(self) -> dict[int, Handler]:
        return {
            RequestCode.HEART_BEAT: self.heartbeat,
            RequestCode.UNREGISTER_CLIENT: self.unregister_client,
            RequestCode.GET_CONSUMER_LIST_BY_GROUP: self.consumer_list,
            RequestCode.CHECK_CLIENT_CONFIG: self.check_client_config,
        }

    async def heartbeat(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        try:
            data = HeartbeatData.decode(cmd.body)
        except ValueError as exc:
            raise HandlerError(ResponseCode.SYSTEM_ERROR, f"bad HeartbeatData body: {exc}") from None
        now = time.monotonic()
        conn = ctx.conn
        created = False
        for consumer in data.consumer_data_set:
            group = consumer.group_name
            sub_group = self._groups.find_or_create(group)
            notify = sub_group.notify_consumer_ids_changed_enable if sub_group is not None else True
            if sub_group is not None and T.retry_topic(group) not in self._topics:
                self._topics.create_if_absent(T.retry_topic(group), sub_group.retry_queue_nums, T.PERM_RW)
                created = True
            info = ClientChannel(conn, data.client_id, conn.language, cmd.version, now)
            changed = self._clients.register_consumer(
                group,
                info,
                consumer.consume_type,
                consumer.message_model,
                consumer.consume_from_where,
                _subscriptions(consumer.subscription_data_set),
                notify=notify,
            )
            if changed:
                ctx.log.info("consumer heartbeat registered", group=group, client_id=data.client_id)
        for producer in data.producer_data_set:
            info = ClientChannel(conn, data.client_id, conn.language, cmd.version, now)
            self._clients.register_producer(producer.group_name, info)
        if created:
            await self._topics.registered()  # J registers a group's new retry topic before answering its heartbeat
        return cmd.make_response()

    async def unregister_client(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        h = decode_header(UnregisterClientRequestHeader, cmd)
        if h.producer_group:
            self._clients.unregister_producer(h.producer_group, ctx.conn)
        if h.consumer_group:
            sub_group = self._groups.get(h.consumer_group)
            notify = sub_group.notify_consumer_ids_changed_enable if sub_group is not None else True
            self._clients.unregister_consumer(h.consumer_group, ctx.conn, notify=notify)
        return cmd.make_response()

    async def consumer_list(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        h = decode_header(GetConsumerListByGroupRequestHeader, cmd)
        ids = self._clients.client_ids(h.consumer_group)
        if not ids:
            ctx.log.warning("no consumer for group", group=h.consumer_group)
            raise HandlerError(ResponseCode.SYSTEM_ERROR, f"no consumer for this group, {h.consumer_group}")
        return cmd.make_response(body=encode_consumer_list(ids))

    async def check_client_config(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        try:
            body = CheckClientRequestBody.decode(cmd.body) if cmd.body else None
        except (BodyDecodeError, ValueError) as exc:
            raise HandlerError(ResponseCode.SYSTEM_ERROR, f"bad CheckClientRequestBody: {exc}") from None
        sub = body.subscription_data if body is not None else None
        if sub is None or is_tag_type(sub.expression_type):
            return cmd.make_response()
        if not self._property_filter:
            raise HandlerError(
                ResponseCode.SYSTEM_ERROR,
                f"The broker does not support consumer to filter message by {sub.expression_type}",
            )
        try:
            if sub.expression_type != SQL92:
                raise SubscriptionParseError(f"expression type {sub.expression_type} is not supported")
            compile_sql(sub.sub_string)
        except SubscriptionParseError as exc:
            ctx.log.warning(
                "consumer filter expression does not compile", group=body.group if body else "", error=str(exc)
            )
            raise HandlerError(ResponseCode.SUBSCRIPTION_PARSE_FAILED, str(exc)) from None
        return cmd.make_response()
