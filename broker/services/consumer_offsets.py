"""ConsumerOffsetTable: committed consume offsets per (topic, group, queue), persisted every
``flushConsumerOffsetInterval`` (5 s) and at shutdown to ``<storePathRootDir>/config/consumerOffset.json``.

File format (J ``ConsumerOffsetManager.encode``; queue ids as quoted JSON keys — J's fastjson writes them
unquoted, and ``broker.persistence`` accepts both when loading)::

    {
     "offsetTable": {
      "TopicTest@CID_demo": {"0": 12, "1": 7}
     }
    }

Offsets are "next offset to consume" (the count of consumed messages), as clients commit them.
"""

from __future__ import annotations

import asyncio

import structlog

from broker.persistence import JsonFile, TableWriter, dumps
from runtime.tasks import stop_tasks

_log = structlog.get_logger("rocketq.broker.offsets")
TOPIC_GROUP_SEPARATOR = "@"


class ConsumerOffsetTable:
    def __init__(self, config_dir: str, flush_interval_ms: int) -> None:
        self._table: dict[str, dict[int, int]] = {}
        self._file = JsonFile(f"{config_dir}/consumerOffset.json")
        self._writer = TableWriter(self._file, self.encode)
        self._interval = flush_interval_ms / 1000
        self._task: asyncio.Task[None] | None = None

    # -- lifecycle ---------------------------------------------------------------------------------------------

    def load(self) -> None:
        doc = self._file.load()
        if not isinstance(doc, dict) or not isinstance(doc.get("offsetTable"), dict):
            if self._file.path.exists() or self._file.bak.exists():
                _log.warning(
                    "consumer offsets unreadable (file and .bak): groups start from their consumeFromWhere",
                    path=str(self._file.path),
                )
            return
        for key, queues in doc["offsetTable"].items():
            if not isinstance(queues, dict) or TOPIC_GROUP_SEPARATOR not in key:
                continue
            try:
                self._table[key] = {int(q): int(o) for q, o in queues.items()}
            except (TypeError, ValueError):
                _log.warning("bad offset entry skipped", key=key)
        _log.info("consumer offsets loaded", entries=len(self._table))

    def encode(self, *, pretty: bool = True) -> bytes:
        """The file format above; ``pretty=False`` gives the compact form GET_ALL_CONSUMER_OFFSET sends (J
        ``ConsumerOffsetManager.encode()``)."""
        table = {k: {str(q): o for q, o in v.items()} for k, v in self._table.items()}
        return dumps({"offsetTable": table}, pretty=pretty)

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._persist_loop(), name="consumer-offset-persist")

    async def _persist_loop(self) -> None:
        while True:
            await asyncio.sleep(self._interval)
            await self._writer.flush()

    async def stop(self) -> None:
        """Stop the periodic task and write whatever changed since the last write."""
        task, self._task = self._task, None
        await stop_tasks(task)
        await self._writer.flush()

    async def flush(self) -> None:
        await self._writer.flush()

    # -- offsets -----------------------------------------------------------------------------------------------

    def commit(self, group: str, topic: str, queue_id: int, offset: int) -> None:
        key = topic + TOPIC_GROUP_SEPARATOR + group
        queues = self._table.get(key)
        if queues is None:
            queues = self._table[key] = {}
        if queues.get(queue_id) != offset:
            queues[queue_id] = offset
            self._writer.mark_dirty_later()

    def put_all(self, table: dict[str, dict[int, int]]) -> None:
        """SlaveSynchronize: the master's ``topic@group → queue → offset`` entries overwrite ours (J ``putAll``);
        keys only this slave has stay."""
        for key, queues in table.items():
            self._table[key] = dict(queues)
        self._writer.mark_dirty()

    def merge_max(self, table: dict[str, dict[int, int]]) -> None:
        """A master taking back a slave's copy: per queue, the larger of the two offsets."""
        for key, queues in table.items():
            mine = self._table.setdefault(key, {})
            for qid, off in queues.items():
                if off > mine.get(qid, -1):
                    mine[qid] = off
        self._writer.mark_dirty()

    def query(self, group: str, topic: str, queue_id: int) -> int:
        """The committed offset, or -1 when none is stored."""
        queues = self._table.get(topic + TOPIC_GROUP_SEPARATOR + group)
        if queues is None:
            return -1
        return queues.get(queue_id, -1)

    def query_all(self, group: str, topic: str) -> dict[int, int]:
        return dict(self._table.get(topic + TOPIC_GROUP_SEPARATOR + group, {}))

    def entries(self) -> list[tuple[str, str, dict[int, int]]]:
        """Every (group, topic, {queue: committed offset}) row (a copy; metrics read it at scrape time)."""
        out = []
        for key, queues in self._table.items():
            topic, sep, group = key.rpartition(TOPIC_GROUP_SEPARATOR)
            if sep:
                out.append((group, topic, dict(queues)))
        return out

    def topics_of_group(self, group: str) -> set[str]:
        """J ``whichTopicByConsumer``: the topics ``group`` has committed offsets on."""
        out: set[str] = set()
        for key in self._table:
            topic, sep, g = key.rpartition(TOPIC_GROUP_SEPARATOR)
            if sep and g == group:
                out.add(topic)
        return out

    def clone(self, src_group: str, dest_group: str, topic: str) -> bool:
        """J ``cloneOffset``: ``dest_group``'s offsets on ``topic`` become a copy of ``src_group``'s (replacing
        whatever it had there). False, and nothing changed, when ``src_group`` has none on ``topic``."""
        queues = self._table.get(topic + TOPIC_GROUP_SEPARATOR + src_group)
        if queues is None:
            return False
        self._table[topic + TOPIC_GROUP_SEPARATOR + dest_group] = dict(queues)
        self._writer.mark_dirty_later()
        return True

    def slowest(self, topic: str, queue_id: int) -> int | None:
        """The smallest offset any group has committed for this queue (None: no group has): below it, every group
        has consumed (the store's forced-clean accounting)."""
        prefix = topic + TOPIC_GROUP_SEPARATOR
        found = [q[queue_id] for k, q in self._table.items() if k.startswith(prefix) and queue_id in q]
        return min(found) if found else None

    def groups_of_topic(self, topic: str) -> set[str]:
        prefix = topic + TOPIC_GROUP_SEPARATOR
        return {k[len(prefix) :] for k in self._table if k.startswith(prefix)}

    def remove_group(self, group: str) -> None:
        suffix = TOPIC_GROUP_SEPARATOR + group
        for key in [k for k in self._table if k.endswith(suffix)]:
            del self._table[key]
        self._writer.mark_dirty_later()

    def remove_topic(self, topic: str) -> None:
        """Drop every group's offsets on ``topic`` (the topic was deleted)."""
        prefix = topic + TOPIC_GROUP_SEPARATOR
        for key in [k for k in self._table if k.startswith(prefix)]:
            del self._table[key]
        self._writer.mark_dirty_later()
