"""SubscriptionGroupTable: consumer-group settings (consume enabled, retry queue count, max retries, notify on
membership change), auto-created on first use when ``autoCreateSubscriptionGroup``, persisted in
``<storePathRootDir>/config/subscriptionGroup.json``.

File format (J ``SubscriptionGroupManager.encode``)::

    {
     "subscriptionGroupTable": {
      "CID_demo": {"groupName": "CID_demo", "consumeEnable": true, "consumeFromMinEnable": true,
                   "consumeBroadcastEnable": true, "retryQueueNums": 1, "retryMaxTimes": 16, "brokerId": 0,
                   "whichBrokerWhenConsumeSlowly": 1, "notifyConsumerIdsChangedEnable": true}
     },
     "dataVersion": {"timestamp": 1700000000000, "counter": 1}
    }
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

import structlog

from broker.persistence import TABLE_DEBOUNCE_S, JsonFile, TableWriter, dumps
from broker.services.topic_config import data_version_from_file, new_data_version, next_data_version

_log = structlog.get_logger("rocketq.broker.groups")

SYSTEM_GROUPS = ("TOOLS_CONSUMER", "FILTERSRV_CONSUMER", "SELF_TEST_C_GROUP", "CID_SYS_RMQ_TRANS", "SCHEDULE_CONSUMER")

_JSON_NAMES = {
    "group_name": "groupName",
    "consume_enable": "consumeEnable",
    "consume_from_min_enable": "consumeFromMinEnable",
    "consume_broadcast_enable": "consumeBroadcastEnable",
    "retry_queue_nums": "retryQueueNums",
    "retry_max_times": "retryMaxTimes",
    "broker_id": "brokerId",
    "which_broker_when_consume_slowly": "whichBrokerWhenConsumeSlowly",
    "notify_consumer_ids_changed_enable": "notifyConsumerIdsChangedEnable",
    "consume_message_orderly": "consumeMessageOrderly",
}


@dataclass(frozen=True, slots=True)
class SubscriptionGroupConfig:
    group_name: str
    consume_enable: bool = True
    consume_from_min_enable: bool = True
    consume_broadcast_enable: bool = True
    retry_queue_nums: int = 1
    retry_max_times: int = 16
    broker_id: int = 0
    which_broker_when_consume_slowly: int = 1
    notify_consumer_ids_changed_enable: bool = True
    # RocketMQ 5: a FIFO group for 5.x (gRPC) consumers (``updateSubGroup -o true``); written only when true
    consume_message_orderly: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            _JSON_NAMES[f.name]: getattr(self, f.name)
            for f in fields(self)
            if f.name != "consume_message_orderly" or self.consume_message_orderly
        }

    @classmethod
    def from_json(cls, name: str, d: dict[str, Any]) -> SubscriptionGroupConfig:
        kwargs: dict[str, Any] = {}
        for f in fields(cls):
            key = _JSON_NAMES[f.name]
            if key in d and d[key] is not None:
                kwargs[f.name] = d[key]
        kwargs["group_name"] = str(kwargs.get("group_name") or name)
        return cls(**kwargs)


class SubscriptionGroupTable:
    def __init__(self, config_dir: str, *, auto_create: bool) -> None:
        self._auto_create = auto_create
        self._groups: dict[str, SubscriptionGroupConfig] = {}
        self.data_version = new_data_version()
        self._file = JsonFile(f"{config_dir}/subscriptionGroup.json")
        self._writer = TableWriter(self._file, self.encode, debounce=TABLE_DEBOUNCE_S)

    def load(self) -> None:
        for name in SYSTEM_GROUPS:
            self._groups[name] = SubscriptionGroupConfig(name)
        doc = self._file.load()
        if isinstance(doc, dict):
            table = doc.get("subscriptionGroupTable") or {}
            if isinstance(table, dict):
                for name, raw in table.items():
                    if isinstance(raw, dict):
                        try:
                            self._groups[name] = SubscriptionGroupConfig.from_json(name, raw)
                        except TypeError as exc:
                            _log.warning("bad subscription group entry skipped", group=name, error=str(exc))
            self.data_version = data_version_from_file(doc.get("dataVersion"))

    def encode(self) -> bytes:
        return dumps(
            {
                "subscriptionGroupTable": {n: g.to_json() for n, g in self._groups.items()},
                "dataVersion": self.data_version.to_json(),
            }
        )

    async def flush(self) -> None:
        await self._writer.flush()

    def save_now(self) -> None:
        self._writer.save_now()

    def get(self, group: str) -> SubscriptionGroupConfig | None:
        return self._groups.get(group)

    def find_or_create(self, group: str) -> SubscriptionGroupConfig | None:
        """J ``findSubscriptionGroupConfig``: the group, created with defaults when auto-create is on; else None."""
        cfg = self._groups.get(group)
        if cfg is None and self._auto_create:
            cfg = SubscriptionGroupConfig(group)
            self.put(cfg)
            _log.info("subscription group auto-created", group=group)
        return cfg

    def put(self, cfg: SubscriptionGroupConfig) -> None:
        self._groups[cfg.group_name] = cfg
        self.data_version = next_data_version(self.data_version)
        self._writer.mark_dirty()

    def delete(self, group: str) -> bool:
        if self._groups.pop(group, None) is None:
            return False
        self.data_version = next_data_version(self.data_version)
        self._writer.mark_dirty()
        return True

    def all(self) -> list[SubscriptionGroupConfig]:
        return list(self._groups.values())

    def replace_from_master(self, doc: dict[str, Any]) -> bool:
        """SlaveSynchronize: adopt the master's whole table and dataVersion when its dataVersion differs; persisted."""
        dv = data_version_from_file(doc.get("dataVersion"))
        if dv == self.data_version:
            return False
        groups: dict[str, SubscriptionGroupConfig] = {}
        for name, raw in (doc.get("subscriptionGroupTable") or {}).items():
            if isinstance(raw, dict):
                try:
                    groups[name] = SubscriptionGroupConfig.from_json(name, raw)
                except TypeError as exc:
                    _log.warning("bad subscription group entry from master skipped", group=name, error=str(exc))
        self._groups = groups
        self.data_version = dv
        self._writer.mark_dirty()
        return True

    def merge_missing(self, doc: dict[str, Any]) -> int:
        """A master taking back a slave's copy: add the groups it lacks; returns how many."""
        added = 0
        for name, raw in (doc.get("subscriptionGroupTable") or {}).items():
            if isinstance(raw, dict) and name not in self._groups:
                try:
                    self.put(SubscriptionGroupConfig.from_json(name, raw))
                except TypeError:
                    continue
                added += 1
        return added

    def set_auto_create(self, enabled: bool) -> None:
        """Runtime config change (UPDATE_BROKER_CONFIG autoCreateSubscriptionGroup)."""
        self._auto_create = enabled
