"""TopicConfigTable: the broker's topics (queue counts, permissions), the system topics, auto-create, and their
persistence in ``<storePathRootDir>/config/topics.json``.

File format (J ``TopicConfigManager.encode``; keys written in this order, standard JSON)::

    {
     "topicConfigTable": {
      "TopicTest": {"topicName": "TopicTest", "readQueueNums": 4, "writeQueueNums": 4, "perm": 6,
                    "topicFilterType": "SINGLE_TAG", "topicSysFlag": 0, "order": false,
                    "attributes": {"message.type": "NORMAL"}}
     },
     "dataVersion": {"timestamp": 1700000000000, "counter": 3}
    }

Start-up follows J: the system topics are put first, then the file is loaded over them (a persisted topic wins).
Every change bumps ``dataVersion``, marks the file for a debounced write (``broker.persistence.TableWriter``: a
burst of creations shares one write; ``flush()`` at shutdown) and notifies the change listeners (the name-server
registrar, wired by ``broker.app``, registers the changed topics: ``take_changed()``; ``registered()`` waits for it).
"""

from __future__ import annotations

import os
import time
from collections.abc import Awaitable, Callable
from typing import Any, Final

import structlog

from broker import topics as T
from broker.config import FeaturesConfig, IdentityConfig
from broker.persistence import TABLE_DEBOUNCE_S, JsonFile, TableWriter, dumps
from protocol.bodies import DataVersion, TopicConfig

_log = structlog.get_logger("rocketq.broker.topics")

SCHEDULE_QUEUE_NUMS = 18
DEFAULT_QUEUE_NUMS = 16  # J TopicConfig.defaultReadQueueNums / defaultWriteQueueNums


def topic_config_from_file(name: str, d: dict[str, Any]) -> TopicConfig:
    """A ``topicConfigTable`` entry of topics.json (or of a master's table), leniently: the name from the key when
    the entry has none, J 4.x's misspelt ``topicSynFlag``, attribute values as text."""
    attributes = d.get("attributes")
    return TopicConfig(
        topic_name=str(d.get("topicName") or name),
        read_queue_nums=int(d.get("readQueueNums", DEFAULT_QUEUE_NUMS)),
        write_queue_nums=int(d.get("writeQueueNums", DEFAULT_QUEUE_NUMS)),
        perm=int(d.get("perm", T.PERM_RW)),
        topic_filter_type=str(d.get("topicFilterType") or "SINGLE_TAG"),
        topic_sys_flag=int(d.get("topicSysFlag", d.get("topicSynFlag", 0)) or 0),
        order=bool(d.get("order", False)),
        attributes={str(k): str(v) for k, v in attributes.items()} if isinstance(attributes, dict) else {},
    )


def new_data_version() -> DataVersion:
    """A table's first DataVersion (J ``new DataVersion()``: now, counter 0)."""
    return DataVersion(counter=0, timestamp=int(time.time() * 1000))


def next_data_version(dv: DataVersion) -> DataVersion:
    """J ``DataVersion.nextVersion()``: on every change of a table."""
    return dv.bumped(int(time.time() * 1000))


def data_version_from_file(d: Any) -> DataVersion:
    """The ``dataVersion`` of a table file, leniently (a missing or malformed one is a new version)."""
    if not isinstance(d, dict):
        return new_data_version()
    return DataVersion(counter=int(d.get("counter", 0) or 0), timestamp=int(d.get("timestamp", 0) or 0))


def system_topics(identity: IdentityConfig, features: FeaturesConfig) -> list[TopicConfig]:
    """The topics J's ``TopicConfigManager`` constructor creates, in its order."""
    out = [TopicConfig.with_queues(T.SELF_TEST_TOPIC, 1)]
    if features.auto_create_topic_enable:
        n = features.default_topic_queue_nums
        out.append(TopicConfig.with_queues(T.AUTO_CREATE_TOPIC, n, T.PERM_INHERIT | T.PERM_RW))
    out.append(TopicConfig.with_queues(T.BENCHMARK_TOPIC, 1024))
    cluster_perm = T.PERM_INHERIT | (T.PERM_RW if features.cluster_topic_enable else 0)
    out.append(TopicConfig.with_queues(identity.broker_cluster_name, DEFAULT_QUEUE_NUMS, cluster_perm))
    broker_perm = T.PERM_INHERIT | (T.PERM_RW if features.broker_topic_enable else 0)
    out.append(TopicConfig.with_queues(identity.broker_name, 1, broker_perm))
    out.append(TopicConfig.with_queues(T.OFFSET_MOVED_EVENT, 1))
    out.append(TopicConfig.with_queues(T.SCHEDULE_TOPIC, SCHEDULE_QUEUE_NUMS))
    if features.trace_topic_enable:
        out.append(TopicConfig.with_queues(features.msg_trace_topic_name, 1))
    out.append(TopicConfig.with_queues(f"{identity.broker_cluster_name}_{T.REPLY_TOPIC_POSTFIX}", 1))
    out.append(TopicConfig.with_queues(T.TRANS_HALF_TOPIC, 1))
    out.append(TopicConfig.with_queues(T.TRANS_OP_HALF_TOPIC, 1))
    return out


class TopicConfigTable:
    def __init__(self, config_dir: str, identity: IdentityConfig, features: FeaturesConfig) -> None:
        self._identity = identity
        self._features = features
        self._topics: dict[str, TopicConfig] = {}
        # the live table by name, for a reader on every request (the send check) to look up without a call into this
        # interpreted class: the same dict for the table's lifetime (changed in place), never written through
        self.by_name: Final[dict[str, TopicConfig]] = self._topics
        self.data_version = new_data_version()
        self._file = JsonFile(f"{config_dir}/topics.json")
        self._writer = TableWriter(self._file, self.encode, debounce=TABLE_DEBOUNCE_S)
        self._listeners: list[Callable[[], None]] = []
        self._registration: Callable[[], Awaitable[None]] | None = None
        # names changed since the registrar last took them (None: too many to tell, register the whole table)
        self._unregistered: dict[str, None] | None = {}

    # -- lifecycle ---------------------------------------------------------------------------------------------

    def load(self) -> None:
        for tc in system_topics(self._identity, self._features):
            self._topics[tc.topic_name] = tc
        doc = self._file.load()
        if isinstance(doc, dict):
            table = doc.get("topicConfigTable") or {}
            if isinstance(table, dict):
                for name, raw in table.items():
                    if isinstance(raw, dict):
                        self._topics[name] = topic_config_from_file(name, raw)
            self.data_version = data_version_from_file(doc.get("dataVersion"))
        unreadable = not isinstance(doc, dict) and (self._file.path.exists() or self._file.bak.exists())
        self._restore_from_queues(unreadable=unreadable)
        self.data_version = next_data_version(self.data_version)
        _log.info("topics loaded", count=len(self._topics), path=str(self._file.path))

    def _restore_from_queues(self, *, unreadable: bool) -> None:
        """Bring back every topic that has consume-queue files on disk but no config, so its messages stay
        reachable: when neither topics.json nor its .bak parses (``unreadable``: every topic), and after a crash
        within the debounced write's window (a topic auto-created by a send, or a retry topic, whose config never
        reached the file while its messages did — under SYNC_FLUSH they were acknowledged as durable).

        Queues are ``<storePathRootDir>/consumequeue/<topic>/<queueId>``; only a queue directory holding a file
        counts (a deleted topic's files are gone, its empty directories stay). A restored topic gets the default
        queue count, or more to cover the highest queue id found; retry and dead-letter topics the one queue J gives
        them. Persisted at once."""
        cq_dir = os.path.join(os.path.dirname(str(self._file.path.parent)), "consumequeue")
        found: dict[str, int] = {}
        try:
            names = os.listdir(cq_dir)
        except OSError:
            names = []
        for topic in names:
            if topic in self._topics:
                continue
            try:
                topic_dir = os.path.join(cq_dir, topic)
                qids = [int(q) for q in os.listdir(topic_dir) if q.isdigit() and os.listdir(os.path.join(topic_dir, q))]
            except OSError:
                continue
            if qids:
                n = max(qids) + 1 if topic.startswith(("%RETRY%", "%DLQ%")) else max(DEFAULT_QUEUE_NUMS, max(qids) + 1)
                self._topics[topic] = TopicConfig.with_queues(topic, n)
                found[topic] = n
        if unreadable:
            _log.warning(
                "topics.json and its .bak are unreadable: topics rebuilt from the consume-queue directories",
                path=str(self._file.path),
                rebuilt=sorted(found),
            )
        elif found:
            _log.warning(
                "topics with consume queues but no config (created shortly before an unclean stop) restored",
                path=str(self._file.path),
                restored=sorted(found),
            )
        if found:
            self.save_now()

    def add_listener(self, cb: Callable[[], None]) -> None:
        """``cb()`` runs after every change (the registrar re-registers at once)."""
        self._listeners.append(cb)

    def set_registration(self, registered: Callable[[], Awaitable[None]]) -> None:
        """``registered()`` returns once the name servers know the changes made so far (the registrar's)."""
        self._registration = registered

    async def registered(self) -> None:
        """Wait until the name servers know this table's changes so far: J registers a topic a send auto-created,
        and a retry topic a heartbeat created, before it answers (no registrar: at once)."""
        if self._registration is not None:
            await self._registration()

    async def flush(self) -> None:
        await self._writer.flush()

    def save_now(self) -> None:
        self._writer.save_now()

    def encode(self) -> bytes:
        return dumps(self.to_json())

    def to_json(self) -> dict[str, Any]:
        return {
            "topicConfigTable": {name: tc.to_json() for name, tc in self._topics.items()},
            "dataVersion": self.data_version.to_json(),
        }

    # -- queries -----------------------------------------------------------------------------------------------

    def get(self, topic: str) -> TopicConfig | None:
        return self._topics.get(topic)

    def __contains__(self, topic: str) -> bool:
        return topic in self._topics

    def all(self) -> list[TopicConfig]:
        return list(self._topics.values())

    def system_topic_names(self) -> frozenset[str]:
        """J ``TopicValidator.getSystemTopicSet()`` on this broker: the static set plus the topics the constructor
        of J's ``TopicConfigManager`` registers (cluster name, broker name, trace topic, <cluster>_REPLY_TOPIC)."""
        return T.SYSTEM_TOPIC_SET | {tc.topic_name for tc in system_topics(self._identity, self._features)}

    # -- changes -----------------------------------------------------------------------------------------------

    def take_changed(self) -> list[str] | None:
        """The topics created, changed or deleted since the last call, for an incremental registration (the
        registrar is the one caller); None when the whole table must be registered."""
        names, self._unregistered = self._unregistered, {}
        return None if names is None else list(names)

    def _changed(self, *names: str) -> None:
        if not names:
            self._unregistered = None
        elif self._unregistered is not None:
            self._unregistered.update(dict.fromkeys(names))
        self.data_version = next_data_version(self.data_version)
        self._writer.mark_dirty()
        for cb in self._listeners:
            try:
                cb()
            except Exception:
                _log.exception("topic change listener failed")

    def put(self, tc: TopicConfig) -> None:
        """Create or replace a topic (admin path)."""
        self._topics[tc.topic_name] = tc
        self._changed(tc.topic_name)

    def delete(self, topic: str) -> bool:
        if self._topics.pop(topic, None) is None:
            return False
        self._changed(topic)
        return True

    def create_in_send(
        self, topic: str, default_topic: str, client_queue_nums: int, topic_sys_flag: int = 0, producer: str = ""
    ) -> TopicConfig | None:
        """J ``createTopicInSendMessageMethod``: a new topic modelled on ``default_topic`` (TBW102) if it may be
        inherited; ``min(client_queue_nums, default.writeQueueNums)`` queues; None if auto-create is not allowed."""
        existing = self._topics.get(topic)
        if existing is not None:
            return existing
        default = self._topics.get(default_topic)
        if default is None:
            _log.warning(
                "auto-create refused: default topic does not exist",
                topic=topic,
                default_topic=default_topic,
                producer=producer,
            )
            return None
        perm = default.perm
        if default_topic == T.AUTO_CREATE_TOPIC and not self._features.auto_create_topic_enable:
            perm = T.PERM_RW  # J downgrades a persisted TBW102 when auto-create is off
        if not T.is_inherited(perm):
            _log.warning(
                "auto-create refused: default topic has no inherit perm",
                topic=topic,
                default_topic=default_topic,
                perm=perm,
                producer=producer,
            )
            return None
        nums = max(0, min(client_queue_nums, default.write_queue_nums))
        tc = TopicConfig.with_queues(
            topic,
            nums,
            perm & ~T.PERM_INHERIT,
            topic_filter_type=default.topic_filter_type,
            topic_sys_flag=topic_sys_flag,
        )
        self._topics[topic] = tc
        _log.info("topic auto-created", topic=topic, queues=nums, producer=producer)
        self._changed(topic)
        return tc

    def create_if_absent(self, topic: str, queue_nums: int, perm: int, topic_sys_flag: int = 0) -> TopicConfig:
        """J ``createTopicInSendMessageBackMethod``: retry/DLQ topics (and other broker-made topics)."""
        existing = self._topics.get(topic)
        if existing is not None:
            return existing
        tc = TopicConfig.with_queues(topic, queue_nums, perm, topic_sys_flag=topic_sys_flag)
        self._topics[topic] = tc
        _log.info("topic created", topic=topic, queues=queue_nums, perm=perm)
        self._changed(topic)
        return tc

    def with_perm(self, topic: str, perm: int) -> TopicConfig | None:
        tc = self._topics.get(topic)
        if tc is None:
            return None
        self.put(tc.model_copy(update={"perm": perm}))
        return self._topics[topic]

    def replace_from_master(self, doc: dict[str, Any]) -> bool:
        """SlaveSynchronize: adopt the master's whole table and dataVersion when its dataVersion differs from ours;
        persisted. Listeners are not called (a slave's topics do not make routes). Returns whether it changed."""
        dv = data_version_from_file(doc.get("dataVersion"))
        if dv == self.data_version:
            return False
        table = doc.get("topicConfigTable") or {}
        fresh = {n: topic_config_from_file(n, raw) for n, raw in table.items() if isinstance(raw, dict)}
        self._topics.clear()  # in place: ``by_name`` is this dict
        self._topics.update(fresh)
        self.data_version = dv
        self._unregistered = None
        self._writer.mark_dirty()
        return True

    def merge_missing(self, doc: dict[str, Any]) -> int:
        """A master taking back a slave's copy (after losing its own): add the topics it lacks; returns how many."""
        added = 0
        for name, raw in (doc.get("topicConfigTable") or {}).items():
            if isinstance(raw, dict) and name not in self._topics:
                self._topics[name] = topic_config_from_file(name, raw)
                added += 1
        if added:
            self._changed()
        return added

    def update_features(self, features: FeaturesConfig) -> None:
        """Runtime config change (UPDATE_BROKER_CONFIG autoCreateTopicEnable): later auto-creates follow it."""
        self._features = features
