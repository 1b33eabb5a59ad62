"""Route bodies: what GET_ROUTEINFO_BY_TOPIC answers and what the name server's cluster info is made of.

| body (class)                           | command(s)                                   | shape                                             |
|----------------------------------------|----------------------------------------------|---------------------------------------------------|
| TopicRouteData                         | GET_ROUTEINFO_BY_TOPIC reply                 | {orderTopicConf, queueDatas:[{brokerName,         |
|                                        |                                              |  readQueueNums, writeQueueNums, perm,             |
|                                        |                                              |  topicSysFlag}], brokerDatas:[{cluster,           |
|                                        |                                              |  brokerName, brokerAddrs:{"0":addr}}],            |
|                                        |                                              |  filterServerTable:{addr:[addr]}}                 |
"""

from __future__ import annotations

from pydantic import (
    AliasChoices,
    Field,
    field_validator,
)

from protocol.bodies.base import JsonBody, _none_is_empty_dict, _none_is_empty_list
from protocol.rules import PERM_RW

# -- routes ----------------------------------------------------------------------------------------------------------


class QueueData(JsonBody):
    broker_name: str = Field(validation_alias="brokerName", serialization_alias="brokerName")
    read_queue_nums: int = Field(default=0, validation_alias="readQueueNums", serialization_alias="readQueueNums")
    write_queue_nums: int = Field(default=0, validation_alias="writeQueueNums", serialization_alias="writeQueueNums")
    perm: int = PERM_RW
    topic_sys_flag: int = Field(
        default=0, validation_alias=AliasChoices("topicSysFlag", "topicSynFlag"), serialization_alias="topicSysFlag"
    )


class BrokerData(JsonBody):
    """``broker_addrs`` is keyed by broker id (0 = master); on the wire the ids are quoted strings."""

    cluster: str = ""
    broker_name: str = Field(validation_alias="brokerName", serialization_alias="brokerName")
    broker_addrs: dict[int, str] = Field(
        default_factory=dict, validation_alias="brokerAddrs", serialization_alias="brokerAddrs"
    )

    _none = field_validator("broker_addrs", mode="before")(_none_is_empty_dict)

    @property
    def master_addr(self) -> str | None:
        return self.broker_addrs.get(0)

    def find_in_subscribe(self, broker_id: int) -> tuple[str, int] | None:
        """J ``findBrokerAddressInSubscribe(name, id, onlyThisBroker=false)``: the address of ``broker_id``; for a
        slave id the next one (id + 1); else any address of the group (the master first). With its broker id."""
        addrs = self.broker_addrs
        for bid in (broker_id, broker_id + 1) if broker_id != 0 else (broker_id,):
            if bid in addrs:
                return addrs[bid], bid
        if not addrs:
            return None
        bid = 0 if 0 in addrs else min(addrs)
        return addrs[bid], bid

    def any_addr(self) -> str | None:
        """The master's address, else the lowest slave id's (J ``selectBrokerAddr``)."""
        addrs = self.broker_addrs
        if 0 in addrs:
            return addrs[0]
        return addrs[min(addrs)] if addrs else None


class TopicRouteData(JsonBody):
    order_topic_conf: str | None = Field(
        default=None, validation_alias="orderTopicConf", serialization_alias="orderTopicConf"
    )
    queue_datas: list[QueueData] = Field(
        default_factory=list, validation_alias="queueDatas", serialization_alias="queueDatas"
    )
    broker_datas: list[BrokerData] = Field(
        default_factory=list, validation_alias="brokerDatas", serialization_alias="brokerDatas"
    )
    filter_server_table: dict[str, list[str]] = Field(
        default_factory=dict, validation_alias="filterServerTable", serialization_alias="filterServerTable"
    )

    _none_lists = field_validator("queue_datas", "broker_datas", mode="before")(_none_is_empty_list)
    _none_dict = field_validator("filter_server_table", mode="before")(_none_is_empty_dict)

    def broker(self, broker_name: str) -> BrokerData | None:
        return next((b for b in self.broker_datas if b.broker_name == broker_name), None)
