"""Operator maintenance requests (J ``AdminBrokerProcessor``, 4.9.8) behind ``mqadmin cleanExpiredCQ``,
``deleteExpiredCommitLog``, ``cleanUnusedTopic`` and ``producer``:

CLEAN_EXPIRED_CONSUMEQUEUE (306), no header
    Drops consume-queue files whose units all point below the commit log's min offset
    (``MessageStore.clean_expired_consume_queues``); SUCCESS, remark = how many files went.
DELETE_EXPIRED_COMMITLOG (329), no header
    One retention pass now, whatever the ``deleteWhen`` hour (J ``executeDeleteFilesManually``); only files older
    than ``fileReservedTime`` (or over the disk ratio) go. SUCCESS, remark = how many commit-log files went.
CLEAN_UNUSED_TOPIC (316), no header
    Drops the consume queues of topics the topic table no longer has (J ``cleanUnusedTopic``), never the schedule
    and transaction system topics; SUCCESS, remark = how many queues went.
GET_ALL_PRODUCER_INFO (328), no header
    ``{"data":{group:[{"clientId","remoteIP","language","version","lastUpdateTimestamp"},…]}}`` (J
    ``ProducerTableInfo``) from the producers' heartbeats.

None of these takes an argument from the request, so none can name a file or a path.
"""

from __future__ import annotations

import json
import time

import structlog

from broker.services.client_registry import ClientRegistry
from broker.services.topic_config import TopicConfigTable
from broker.store.message_store import MessageStore
from protocol.codes import RequestCode
from protocol.command import RemotingCommand
from protocol.remoting.handler import Handler, RequestContext

_log = structlog.get_logger("rocketq.broker.admin")

# consume queues that have no entry in the topic table but must survive cleanUnusedTopic
_KEEP = ("SCHEDULE_TOPIC_XXXX", "RMQ_SYS_TRANS_HALF_TOPIC", "RMQ_SYS_TRANS_OP_HALF_TOPIC")


class AdminMaintenanceHandlers:
    def __init__(self, store: MessageStore, topics: TopicConfigTable, clients: ClientRegistry) -> None:
        self._store = store
        self._topics = topics
        self._clients = clients

    def table(self) -> dict[int, Handler]:
        return {
            RequestCode.CLEAN_EXPIRED_CONSUMEQUEUE: self.clean_expired_cq,
            RequestCode.DELETE_EXPIRED_COMMITLOG: self.delete_expired_commit_log,
            RequestCode.CLEAN_UNUSED_TOPIC: self.clean_unused_topic,
            RequestCode.GET_ALL_PRODUCER_INFO: self.producer_info,
        }

    async def clean_expired_cq(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        n = self._store.clean_expired_consume_queues()
        _log.info("expired consume queues cleaned", peer=ctx.conn.peer, files=n)
        return cmd.make_response(remark=f"{n} consume queue file(s) removed")

    async def delete_expired_commit_log(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        n = self._store.delete_expired_now()
        _log.info("expired commit log deleted on request", peer=ctx.conn.peer, files=n)
        return cmd.make_response(remark=f"{n} commit log file(s) removed")

    async def clean_unused_topic(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        known = {tc.topic_name for tc in self._topics.all()}
        unused = {
            t
            for t in self._store.topics_and_queues()
            if t not in known and t not in _KEEP and not t.startswith("rmq_sys_")
        }
        n = self._store.delete_topics(unused)
        _log.info("unused topics cleaned", peer=ctx.conn.peer, topics=sorted(unused), queues=n)
        return cmd.make_response(remark=f"{n} queue(s) of {len(unused)} unused topic(s) removed")

    async def producer_info(self, ctx: RequestContext, cmd: RemotingCommand) -> RemotingCommand:
        now_wall, now_mono = time.time(), time.monotonic()
        data = {
            group: [
                {
                    "clientId": c.client_id,
                    "remoteIP": c.channel.peer,
                    "language": getattr(c.language, "name", str(c.language)),
                    "version": c.version,
                    "lastUpdateTimestamp": int((now_wall - (now_mono - c.last_update)) * 1000),
                }
                for c in sorted(chans, key=lambda c: c.client_id)
            ]
            for group, chans in sorted(self._clients.producer_groups().items())
        }
        return cmd.make_response(body=json.dumps({"data": data}, separators=(",", ":")).encode())
