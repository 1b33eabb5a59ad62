"""CONSUMER_SEND_MSG_BACK (36): a consumer gives a message back for a later retry (J ``SendMessageProcessor.
asyncConsumerSendMsgBack``, 4.9.7).

Steps and replies, in J's order:

============================================================ ========================== ==============================
check                                                        code                       remark
============================================================ ========================== ==============================
group unknown and autoCreateSubscriptionGroup off            SUBSCRIPTION_GROUP_NOT_EXIST subscription group not exist, g
broker not writeable (brokerPermission)                      NO_PERMISSION              the broker[ip] sending message…
group's retryQueueNums ≤ 0                                   SUCCESS (message dropped)  -
%RETRY%<group> not writeable                                 NO_PERMISSION              the topic[t] sending message…
no message at the commit-log ``offset``                      SYSTEM_ERROR               look message by offset failed, n
============================================================ ========================== ==============================

Where the message goes:

* ``reconsumeTimes >= maxReconsumeTimes`` or ``delayLevel < 0`` → ``%DLQ%<group>`` (1 queue, created on demand
  with perm RW as J 4.9.7 does), no delay;
* otherwise → ``%RETRY%<group>`` (created with the group's retryQueueNums, perm RW), queue picked at random, with
  delay level ``3 + reconsumeTimes`` when the header's is 0, so it travels through ``SCHEDULE_TOPIC_XXXX``
  (``ScheduleService.divert``) and reappears in the retry topic after that level's delay.

``maxReconsumeTimes`` is the header's value when the client sends one (J: request version ≥ V3_4_9), else the
group's ``retryMaxTimes`` (16). The new message keeps body, flag, sysFlag, born timestamp/host and properties; gets
``reconsumeTimes + 1``; ``RETRY_TOPIC`` = the original topic unless already set (a message retried again keeps the
first one, which the push consumer restores on receipt); ``ORIGIN_MESSAGE_ID`` = the existing one, else the
original's offset msgId (J uses ``msgExt.getMsgId()``, the offset id on the broker side); ``WAIT=false`` as J sets.
"""

from __future__ import annotations

import random

from broker import topics as T
from broker.handlers._common import decode_header
from broker.services.broker_stats import BrokerStats
from broker.services.schedule import ScheduleService
from broker.services.subscription_groups import SubscriptionGroupTable
from broker.services.topic_config import TopicConfigTable
from broker.store.message_store import MessageStore
from broker.store.request import PutRequest
from broker.store.results import PutMessageStatus
from protocol.codes import RequestCode, ResponseCode
from protocol.command import RemotingCommand
from protocol.headers import ConsumerSendMsgBackRequestHeader
from protocol.message_properties import PropertyKey, encode_properties
from protocol.remoting.handler import Handler, HandlerError, RequestContext

DLQ_NUMS_PER_GROUP = 1
FAQ_GROUP = "\nSee http://rocketmq.apache.org/docs/faq/ for further details."


class SendBackHandlers:
    def __init__(
        self,
        store: MessageStore,
        topics: TopicConfigTable,
        groups: SubscriptionGroupTable,
        schedule: ScheduleService,
        *,
        broker_ip: str,
        broker_permission: int,
        stats: BrokerStats | None = None,
    ) -> None:
        self._stats = stats
        self._store = store
        self._topics = topics
        self._groups = groups
        self._schedule = schedule
        self._broker_ip = broker_ip
        self._writeable = T.is_writeable(broker_permission)
        self.sent_back = 0
        self.to_dlq = 0

    def set_broker_permission(self, perm: int) -> None:
        """``brokerPermission`` changed at runtime (UPDATE_BROKER_CONFIG): J reads it on every request."""
        self._writeable = T.is_writeable(perm)

    def table(self) -> dict[int, Handler]:
        return {RequestCode.CONSUMER_SEND_MSG_BACK: self.send_back}

    async def send_back(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        h = decode_header(ConsumerSendMsgBackRequestHeader, cmd)
        group_cfg = self._groups.find_or_create(h.group)
        if group_cfg is None:
            raise HandlerError(
                ResponseCode.SUBSCRIPTION_GROUP_NOT_EXIST, f"subscription group not exist, {h.group} {FAQ_GROUP}"
            )
        if not self._writeable:
            raise HandlerError(
                ResponseCode.NO_PERMISSION, f"the broker[{self._broker_ip}] sending message is forbidden"
            )
        if group_cfg.retry_queue_nums <= 0:
            return cmd.make_response()
        retry = T.retry_topic(h.group)
        tc = self._topics.create_if_absent(retry, group_cfg.retry_queue_nums, T.PERM_RW)
        if not T.is_writeable(tc.perm):
            raise HandlerError(ResponseCode.NO_PERMISSION, f"the topic[{retry}] sending message is forbidden")
        msg = self._store.look_message_by_offset(h.offset)
        if msg is None:
            raise HandlerError(ResponseCode.SYSTEM_ERROR, f"look message by offset failed, {h.offset}")

        props = dict(msg.properties)
        props.setdefault(PropertyKey.RETRY_TOPIC, msg.topic)
        props[PropertyKey.WAIT] = "false"
        if not props.get(PropertyKey.ORIGIN_MESSAGE_ID):
            props[PropertyKey.ORIGIN_MESSAGE_ID] = msg.offset_msg_id
        max_times = h.max_reconsume_times if h.max_reconsume_times is not None else group_cfg.retry_max_times
        delay = h.delay_level
        if msg.reconsume_times >= max_times or delay < 0:
            topic = T.dlq_topic(h.group)
            dlq = self._topics.create_if_absent(topic, DLQ_NUMS_PER_GROUP, T.PERM_RW)
            qid = random.randrange(max(1, min(DLQ_NUMS_PER_GROUP, dlq.write_queue_nums)))
            props[PropertyKey.DELAY] = "0"  # J: msgExt.setDelayTimeLevel(0) before the DLQ put, stored as DELAY=0
            text = encode_properties(props)
            self.to_dlq += 1
        else:
            topic = retry
            qid = random.randrange(max(1, min(group_cfg.retry_queue_nums, tc.write_queue_nums)))
            if delay == 0:
                delay = 3 + msg.reconsume_times
            props[PropertyKey.DELAY] = str(delay)
            topic, qid, text = self._schedule.divert(topic, qid, encode_properties(props))
        result = await self._store.put_message(
            PutRequest.from_ext(
                msg, topic=topic, queue_id=qid, properties=text, reconsume_times=msg.reconsume_times + 1
            ),
            wait=False,
        )
        if result.status is not PutMessageStatus.PUT_OK:
            raise HandlerError(ResponseCode.SYSTEM_ERROR, result.status.name)
        self.sent_back += 1
        if self._stats is not None and topic.startswith(T.DLQ_PREFIX):
            self._stats.on_dlq(h.group, props.get(PropertyKey.RETRY_TOPIC, msg.topic))
        return cmd.make_response()
