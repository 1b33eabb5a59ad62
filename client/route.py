"""Pure route logic: a topic's route (GET_ROUTEINFO_BY_TOPIC body) → publish queues, subscribe queues, addresses.

Producers use ``writeQueueNums`` of the queue data of brokers that have a master (broker id 0); consumers use
``readQueueNums``. Permissions: 4 = readable, 2 = writable (``perm``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from client.message import MessageQueue
from protocol.bodies import loads_lenient
from protocol.rules import PERM_READ, PERM_WRITE

MASTER_ID = 0


@dataclass(frozen=True, slots=True)
class BrokerData:
    cluster: str
    broker_name: str
    addrs: dict[int, str]

    @property
    def master_addr(self) -> str | None:
        return self.addrs.get(MASTER_ID)

    def find_in_subscribe(self, broker_id: int) -> tuple[str, int] | None:
        """J ``findBrokerAddressInSubscribe(name, id, onlyThisBroker=false)``: the address of ``broker_id``; for a
        slave id the next one (id + 1); else any address of the group (the master first). With its broker id."""
        for bid in (broker_id, broker_id + 1) if broker_id != MASTER_ID else (broker_id,):
            if bid in self.addrs:
                return self.addrs[bid], bid
        if not self.addrs:
            return None
        bid = MASTER_ID if MASTER_ID in self.addrs else min(self.addrs)
        return self.addrs[bid], bid

    def any_addr(self) -> str | None:
        if MASTER_ID in self.addrs:
            return self.addrs[MASTER_ID]
        return self.addrs[min(self.addrs)] if self.addrs else None


@dataclass(frozen=True, slots=True)
class QueueData:
    broker_name: str
    read_queue_nums: int
    write_queue_nums: int
    perm: int


@dataclass(frozen=True, slots=True)
class TopicRoute:
    topic: str
    brokers: dict[str, BrokerData] = field(default_factory=dict)
    queues: list[QueueData] = field(default_factory=list)
    order_topic_conf: str | None = None

    @classmethod
    def parse(cls, topic: str, body: bytes) -> TopicRoute:
        raw = loads_lenient(body)
        brokers: dict[str, BrokerData] = {}
        for bd in raw.get("brokerDatas") or []:
            addrs = {int(k): str(v) for k, v in (bd.get("brokerAddrs") or {}).items()}
            brokers[bd["brokerName"]] = BrokerData(str(bd.get("cluster", "")), bd["brokerName"], addrs)
        queues = [
            QueueData(q["brokerName"], int(q.get("readQueueNums", 0)), int(q.get("writeQueueNums", 0)), int(q["perm"]))
            for q in raw.get("queueDatas") or []
        ]
        return cls(topic, brokers, queues, raw.get("orderTopicConf"))

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
