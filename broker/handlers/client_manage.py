"""Client membership requests: HEART_BEAT, UNREGISTER_CLIENT, GET_CONSUMER_LIST_BY_GROUP, CHECK_CLIENT_CONFIG.

HEART_BEAT (J ``ClientManageProcessor.heartBeat``): for each consumer group, find or auto-create the subscription
group, create its ``%RETRY%<group>`` topic (retryQueueNums queues, perm RW), and register the channel with its
subscriptions (the tag codes are recomputed from the tag strings — C++ sends ``codeSet: [0,0]``); for each producer
group, register the channel. The body is parsed by ``protocol.bodies.HeartbeatData`` (C++ enum ordinals, J/ali-ons
names, C++'s trailing newline). The reply is SUCCESS with no body; when the heartbeat created a retry topic it goes
out once the name servers know that topic (J registers it first; ``TopicConfigTable.registered``).
"""

from __future__ import annotations

import time

from broker import topics as T
from broker.filter import SubscriptionParseError, build_subscription
from broker.handlers._common import decode_header
from broker.services.client_registry import ClientChannel, ClientRegistry, SubscriptionData
from broker.services.subscription_groups import SubscriptionGroupTable
from broker.services.topic_config import TopicConfigTable
from protocol.bodies import HeartbeatData, encode_consumer_list
from protocol.bodies import SubscriptionData as SubscriptionBody
from protocol.codes import RequestCode, ResponseCode
from protocol.command import RemotingCommand
from protocol.headers import GetConsumerListByGroupRequestHeader, UnregisterClientRequestHeader
from protocol.remoting.handler import Handler, HandlerError, RequestContext


def _subscriptions(consumer_subs: list[SubscriptionBody]) -> list[SubscriptionData]:
    out = []
    for s in consumer_subs:
        try:
            out.append(build_subscription(s.topic, s.sub_string, int(s.sub_version or 0), s.expression_type or "TAG"))
        except SubscriptionParseError:
            out.append(SubscriptionData(s.topic, s.sub_string or "*"))
    return out


class ClientManageHandlers:
    def __init__(self, clients: ClientRegistry, groups: SubscriptionGroupTable, topics: TopicConfigTable) -> None:
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
        return cmd.make_response()
