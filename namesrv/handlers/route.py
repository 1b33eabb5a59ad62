"""Route queries and route admin: GET_ROUTEINFO_BY_TOPIC, GET_BROKER_CLUSTER_INFO, the topic lists
(GET_ALL_TOPIC_LIST_FROM_NAMESERVER, GET_TOPICS_BY_CLUSTER, GET_SYSTEM_TOPIC_LIST_FROM_NS, GET_UNIT_TOPIC_LIST,
GET_HAS_UNIT_SUB_TOPIC_LIST, GET_HAS_UNIT_SUB_UNUNIT_TOPIC_LIST), DELETE_TOPIC_IN_NAMESRV, WIPE_WRITE_PERM_OF_BROKER
and ADD_WRITE_PERM_OF_BROKER.

Every topic list is a TopicList body; only the system list carries ``brokerAddr`` (one broker to ask for the
broker-side system topics, as J's ``getSystemTopicList`` does).

Routes are always standard JSON with quoted broker-id keys, whatever the client's version or
``acceptStandardJsonOnly`` says (``protocol.bodies.TopicRouteData``). ``orderTopicConf`` is filled from the ORDER_TOPIC_CONFIG KV
namespace when ``orderMessageEnable`` is on, as in J.
"""

from __future__ import annotations

from namesrv.config import LiveConfig
from namesrv.handlers._header import read_header
from namesrv.kv_config import NAMESPACE_ORDER_TOPIC_CONFIG, KvConfig
from namesrv.route_table import RouteTable
from protocol.bodies import encode_topic_list
from protocol.codes import RequestCode, ResponseCode
from protocol.command import RemotingCommand
from protocol.headers import (
    BrokerNameRequestHeader,
    GetRouteInfoRequestHeader,
    GetTopicsByClusterRequestHeader,
    TopicRequestHeader,
)
from protocol.remoting import Handler, HandlerError, RequestContext

# J: "No topic route info in name server for the topic: X" + FAQUrl.suggestTodo(FAQUrl.APPLY_TOPIC_URL)
FAQ_SUFFIX = "\nSee http://rocketmq.apache.org/docs/faq/ for further details."


class RouteHandlers:
    def __init__(self, routes: RouteTable, kv: KvConfig, config: LiveConfig) -> None:
        self._routes = routes
        self._kv = kv
        self._config = config

    def table(self) -> dict[int, Handler]:
        return {
            RequestCode.GET_ROUTEINFO_BY_TOPIC: self.get_route,
            RequestCode.GET_BROKER_CLUSTER_INFO: self.get_cluster_info,
            RequestCode.GET_ALL_TOPIC_LIST_FROM_NAMESERVER: self.get_all_topics,
            RequestCode.GET_TOPICS_BY_CLUSTER: self.get_topics_by_cluster,
            RequestCode.GET_SYSTEM_TOPIC_LIST_FROM_NS: self.get_system_topics,
            RequestCode.GET_UNIT_TOPIC_LIST: self.get_unit_topics,
            RequestCode.GET_HAS_UNIT_SUB_TOPIC_LIST: self.get_unit_sub_topics,
            RequestCode.GET_HAS_UNIT_SUB_UNUNIT_TOPIC_LIST: self.get_unit_sub_non_unit_topics,
            RequestCode.DELETE_TOPIC_IN_NAMESRV: self.delete_topic,
            RequestCode.WIPE_WRITE_PERM_OF_BROKER: self.wipe_write_perm,
            RequestCode.ADD_WRITE_PERM_OF_BROKER: self.add_write_perm,
        }

    async def get_route(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        topic = read_header(GetRouteInfoRequestHeader, cmd).topic
        route = self._routes.route(topic)
        if route is None:
            raise HandlerError(
                ResponseCode.TOPIC_NOT_EXIST, f"No topic route info in name server for the topic: {topic}{FAQ_SUFFIX}"
            )
        if self._config.current.order_message_enable:
            order_conf = self._kv.get(NAMESPACE_ORDER_TOPIC_CONFIG, topic)
            if order_conf is not None:
                route = route.model_copy(update={"order_topic_conf": order_conf})
        return cmd.make_response(body=route.encode())

    async def get_cluster_info(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        return cmd.make_response(body=self._routes.cluster_info().encode())

    async def get_all_topics(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        return cmd.make_response(body=encode_topic_list(self._routes.all_topics()))

    async def get_topics_by_cluster(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        cluster = read_header(GetTopicsByClusterRequestHeader, cmd).cluster
        return cmd.make_response(body=encode_topic_list(self._routes.topics_by_cluster(cluster)))

    async def get_system_topics(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        system = self._routes.system_topics()
        return cmd.make_response(body=encode_topic_list(system.topics, system.broker_addr))

    async def get_unit_topics(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        return cmd.make_response(body=encode_topic_list(self._routes.unit_topics()))

    async def get_unit_sub_topics(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        return cmd.make_response(body=encode_topic_list(self._routes.unit_sub_topics()))

    async def get_unit_sub_non_unit_topics(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        return cmd.make_response(body=encode_topic_list(self._routes.unit_sub_non_unit_topics()))

    async def delete_topic(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        topic = read_header(TopicRequestHeader, cmd).topic
        cluster = cmd.ext_fields.get("clusterName") or None  # J 5.x adds it; TopicRequestHeader does not carry it
        if self._routes.delete_topic(topic, cluster):
            ctx.log.info("topic deleted", topic=topic, cluster=cluster, peer=ctx.conn.peer)
        return cmd.make_response()

    async def wipe_write_perm(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        name = read_header(BrokerNameRequestHeader, cmd).broker_name
        count = self._routes.wipe_write_perm(name)
        ctx.log.info("wipe write perm of broker", broker_name=name, topics=count, peer=ctx.conn.peer)
        return cmd.make_response(ext_fields={"wipeTopicCount": str(count)})

    async def add_write_perm(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        name = read_header(BrokerNameRequestHeader, cmd).broker_name
        count = self._routes.add_write_perm(name)
        ctx.log.info("add write perm of broker", broker_name=name, topics=count, peer=ctx.conn.peer)
        return cmd.make_response(ext_fields={"addTopicCount": str(count)})
