"""Pure route logic: a topic's route (GET_ROUTEINFO_BY_TOPIC body) → publish queues, subscribe queues, addresses.

Producers use ``writeQueueNums`` of the queue data of brokers that have a master (broker id 0); consumers use
``readQueueNums``. Permissions: 4 = readable, 2 = writable (``perm``). The broker and queue data are the wire models
(``protocol.bodies.BrokerData`` / ``QueueData``, re-exported here); ``TopicRoute`` indexes them by broker name.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from client.message import MessageQueue
from protocol.bodies import BrokerData, QueueData, TopicRouteData, loads_lenient
from protocol.rules import PERM_READ, PERM_WRITE

MASTER_ID = 0

__all__ = ["MASTER_ID", "BrokerData", "QueueData", "TopicRoute", "loads_lenient"]


@dataclass(frozen=True, slots=True)
class TopicRoute:
    topic: str
    brokers: dict[str, BrokerData] = field(default_factory=dict)
    queues: list[QueueData] = field(default_factory=list)
    order_topic_conf: str | None = None

    @classmethod
    def parse(cls, topic: str, body: bytes) -> TopicRoute:
        """The GET_ROUTEINFO_BY_TOPIC body (``protocol.bodies.TopicRouteData``, fastjson quirks included); raises
        ``BodyDecodeError``."""
        data = TopicRouteData.decode(body)
        brokers = {bd.broker_name: bd for bd in data.broker_datas}
        return cls(topic, brokers, list(data.queue_datas), data.order_topic_conf)

    def publish_queues(self) -> list[MessageQueue]:
        """Writable queues on brokers with a live master, ordered by broker name then queue id."""
        out: list[MessageQueue] = []
        for qd in sorted(self.queues, key=lambda q: q.broker_name):
            bd = self.brokers.get(qd.broker_name)
            if bd is None or bd.master_addr is None or not qd.perm & PERM_WRITE:
                continue
            out.extend(MessageQueue(self.topic, qd.broker_name, i) for i in range(qd.write_queue_nums))
        return out

    def subscribe_queues(self) -> list[MessageQueue]:
        out: list[MessageQueue] = []
        for qd in sorted(self.queues, key=lambda q: q.broker_name):
            if qd.broker_name not in self.brokers or not qd.perm & PERM_READ:
                continue
            out.extend(MessageQueue(self.topic, qd.broker_name, i) for i in range(qd.read_queue_nums))
        return out

    def master_addr(self, broker_name: str) -> str | None:
        bd = self.brokers.get(broker_name)
        return bd.master_addr if bd else None

    def read_addr(self, broker_name: str) -> str | None:
        """Master first, else any slave (the seeds' master → slave fallback for offsets and pulls)."""
        bd = self.brokers.get(broker_name)
        return bd.any_addr() if bd else None
