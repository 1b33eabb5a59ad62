"""Admin inspection of queues and messages (J ``AdminBrokerProcessor``, 4.9.7): raw consume-queue units, the system
topic list, and consuming one stored message directly on a chosen client.

QUERY_CONSUME_QUEUE (321), header topic, queueId, index, count, consumerGroup
    QueryConsumeQueueResponseBody (keys alphabetical, as fastjson writes the bean)::

        {"filterData":null,"maxQueueIndex":M,"minQueueIndex":m,
         "queueData":[{"bitMap":null,"eval":false,"extendDataJson":null,"msg":null,
                       "physicOffset":P,"physicSize":S,"tagsCode":C},…],
         "subscriptionData":<SubscriptionData>|null}

    ``queueData`` holds at most ``count`` units from queue offset ``index``, within the consume-queue file holding
    ``index`` (J ``getIndexBuffer``). With ``consumerGroup``: ``subscriptionData`` is that group's subscription to
    the topic from its consumers' heartbeats; none → ``filterData`` "<group>@<topic> is not online!" (J). J puts
    the SQL92 ConsumerFilterData in ``filterData`` otherwise (the text "null" for tag subscriptions); this broker
    filters by tags only, so it stays null. No such consume queue → SYSTEM_ERROR "<queueId>@<topic> is not exist!";
    ``index`` outside [min, max) → SUCCESS with remark "Index <i> of <queueId>@<topic> is not exist!" and no units
    (J sends no body then, which J's own tool cannot decode; the body here still carries min/max).
GET_SYSTEM_TOPIC_LIST_FROM_BROKER (305), no header
    TopicList ``{"topicList":[…]}`` (sorted): J's system topic set as this broker has it
    (``TopicConfigTable.system_topic_names``).
CONSUME_MESSAGE_DIRECTLY (309), header consumerGroup, clientId, msgId, brokerName
    ``msgId`` is an offset msgId; the stored record at its commit-log offset becomes the body, ``brokerName`` is set
    to this broker's name, and the request goes to that client (``_common.call_consumer``, 10 s), whose reply
    (ConsumeMessageDirectlyResult) is relayed unchanged. Missing msgId → SYSTEM_ERROR "the custom field <msgId> is
    null"; not an offset msgId, or no record there → SYSTEM_ERROR "can not find message by the msgId <id>" (J
    fails with a NullPointerException there); client not connected → CONSUMER_NOT_ONLINE "The Consumer <g> <cid>
    not online"; no reply in time → CONSUME_MSG_TIMEOUT.
"""

from __future__ import annotations

from broker.handlers._common import call_consumer, decode_header
from broker.services.client_registry import ClientRegistry
from broker.services.topic_config import TopicConfigTable
from broker.store.message_store import MessageStore
from protocol.bodies import ConsumeQueueData, QueryConsumeQueueResponseBody, SubscriptionData, encode_topic_list
from protocol.codes import RequestCode, ResponseCode
from protocol.command import RemotingCommand
from protocol.headers import ConsumeMessageDirectlyResultRequestHeader, QueryConsumeQueueRequestHeader
from protocol.msg_id import decode_offset_msg_id
from protocol.record import check_record
from protocol.remoting.handler import Handler, HandlerError, RequestContext


class AdminQueueHandlers:
    def __init__(
        self, store: MessageStore, topics: TopicConfigTable, clients: ClientRegistry, *, broker_name: str
    ) -> None:
        self._store = store
        self._topics = topics
        self._clients = clients
        self._broker_name = broker_name

    def table(self) -> dict[int, Handler]:
        return {
            RequestCode.QUERY_CONSUME_QUEUE: self.query_consume_queue,
            RequestCode.GET_SYSTEM_TOPIC_LIST_FROM_BROKER: self.system_topics,
            RequestCode.CONSUME_MESSAGE_DIRECTLY: self.consume_message_directly,
        }

    def _subscription(self, group: str, topic: str) -> SubscriptionData | None:
        grp = self._clients.consumer_group(group)
        sub = grp.subscriptions.get(topic) if grp is not None else None
        if sub is None:
            return None
        return sub.to_wire()

    async def query_consume_queue(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        h = decode_header(QueryConsumeQueueRequestHeader, cmd)
        where = f"{h.queue_id}@{h.topic}"
        got = self._store.read_consume_queue(h.topic, h.queue_id, h.index, h.count)
        if got is None:
            raise HandlerError(ResponseCode.SYSTEM_ERROR, f"{where} is not exist!")
        sub: SubscriptionData | None = None
        filter_data: str | None = None
        if h.consumer_group is not None:
            sub = self._subscription(h.consumer_group, h.topic)
            if sub is None:
                filter_data = f"{h.consumer_group}@{h.topic} is not online!"
        remark = None
        if not got.min_offset <= h.index < got.max_offset:
            remark = f"Index {h.index} of {where} is not exist!"
        body = QueryConsumeQueueResponseBody(
            filter_data=filter_data,
            max_queue_index=got.max_offset,
            min_queue_index=got.min_offset,
            queue_data=[
                ConsumeQueueData(physic_offset=u.phys_offset, physic_size=u.size, tags_code=u.tags_code)
                for u in got.units
            ],
            subscription_data=sub,
        )
        return cmd.make_response(remark=remark, body=body.encode())

    async def system_topics(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        return cmd.make_response(body=encode_topic_list(self._topics.system_topic_names()))

    def _stored_record(self, msg_id: str) -> bytes:
        try:
            _ip, _port, phys = decode_offset_msg_id(msg_id)
        except ValueError:
            phys = -1
        raw = self._store.select_one_message_by_offset(phys) if phys >= 0 else None
        if raw is not None:  # an offset inside a record, or at an end-of-file filler, reads as garbage
            try:
                if check_record(raw, 0, check_crc=False) != len(raw):
                    raw = None
            except ValueError:
                raw = None
        if raw is None:
            raise HandlerError(ResponseCode.SYSTEM_ERROR, f"can not find message by the msgId {msg_id}")
        return raw

    async def consume_message_directly(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        h = decode_header(ConsumeMessageDirectlyResultRequestHeader, cmd)
        if h.msg_id is None:
            raise HandlerError(ResponseCode.SYSTEM_ERROR, "the custom field <msgId> is null")
        raw = self._stored_record(h.msg_id)
        ext = {**cmd.ext_fields, "brokerName": self._broker_name}
        client_id = h.client_id if h.client_id is not None else "null"
        return await call_consumer(self._clients, cmd, h.consumer_group, client_id, ext_fields=ext, body=raw)
