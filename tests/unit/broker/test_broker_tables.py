"""Broker config tables: atomic JSON persistence with .bak fallback, topics (system topics, auto-create), groups,
consumer offsets."""

from __future__ import annotations

import json
from pathlib import Path

from broker import topics as T
from broker.config import load_config
from broker.persistence import JsonFile
from broker.services.consumer_offsets import ConsumerOffsetTable
from broker.services.subscription_groups import SubscriptionGroupTable
from broker.services.topic_config import TopicConfigTable


def test_json_file_atomic_and_bak(tmp_path: Path) -> None:
    f = JsonFile(tmp_path / "config" / "x.json")
    assert f.load() is None
    f.save(b'{"v": 1}')
    f.save(b'{"v": 2}')
    assert f.load() == {"v": 2}
    assert json.loads(f.bak.read_text()) == {"v": 1}
    f.path.write_text("{torn")
    assert f.load() == {"v": 1}
    assert not f.tmp.exists()


def test_json_file_accepts_fastjson_int_keys(tmp_path: Path) -> None:
    p = tmp_path / "consumerOffset.json"
    p.write_text('{"offsetTable":{"T@G":{0:12,1:3}}}')
    t = ConsumerOffsetTable(str(tmp_path), 5000)
    t._file = JsonFile(p)
    t.load()
    assert t.query("G", "T", 0) == 12 and t.query("G", "T", 1) == 3 and t.query("G", "T", 2) == -1


def _table(tmp_path: Path, **over: object) -> TopicConfigTable:
    cfg = load_config(None, {"storePathRootDir": tmp_path, **over})
    t = TopicConfigTable(cfg.store.config_dir, cfg.identity, cfg.features)
    t.load()
    return t


def test_system_topics(tmp_path: Path) -> None:
    t = _table(tmp_path)
    tbw = t.get(T.AUTO_CREATE_TOPIC)
    assert tbw is not None and tbw.perm == 7 and tbw.write_queue_nums == 8
    sched = t.get(T.SCHEDULE_TOPIC)
    assert sched is not None and sched.read_queue_nums == 18 and sched.perm == 6
    for name in ("SELF_TEST_TOPIC", "DefaultCluster", "broker-a", "RMQ_SYS_TRANS_HALF_TOPIC", "OFFSET_MOVED_EVENT"):
        assert name in t
    assert T.AUTO_CREATE_TOPIC not in _table(tmp_path / "b", autoCreateTopicEnable=False)


def test_auto_create_and_reload(tmp_path: Path) -> None:
    t = _table(tmp_path)
    changes: list[int] = []
    t.add_listener(lambda: changes.append(1))
    tc = t.create_in_send("NewTopic", T.AUTO_CREATE_TOPIC, 4)
    assert tc is not None and tc.write_queue_nums == 4 and tc.perm == 6
    assert t.create_in_send("Big", T.AUTO_CREATE_TOPIC, 100).write_queue_nums == 8  # type: ignore[union-attr]
    assert t.create_in_send("X", "NoSuchDefault", 4) is None
    assert changes == [1, 1]
    t.save_now()
    again = _table(tmp_path)
    assert again.get("NewTopic") == tc


def test_groups_auto_create(tmp_path: Path) -> None:
    g = SubscriptionGroupTable(str(tmp_path), auto_create=True)
    g.load()
    cfg = g.find_or_create("CID_x")
    assert cfg is not None and cfg.retry_max_times == 16 and cfg.consume_enable
    g.save_now()
    h = SubscriptionGroupTable(str(tmp_path), auto_create=False)
    h.load()
    assert h.get("CID_x") == cfg
    assert h.find_or_create("CID_y") is None


async def test_offsets_persist(tmp_path: Path) -> None:
    t = ConsumerOffsetTable(str(tmp_path), 50)
    t.load()
    t.start()
    t.commit("G", "T", 0, 5)
    t.commit("G", "T", 1, 9)
    await t.stop()
    doc = json.loads((tmp_path / "consumerOffset.json").read_text())
    assert doc == {"offsetTable": {"T@G": {"0": 5, "1": 9}}}
    u = ConsumerOffsetTable(str(tmp_path), 50)
    u.load()
    assert u.query("G", "T", 1) == 9


def test_topics_with_queue_files_but_no_config_come_back(tmp_path: Path) -> None:
    """A crash inside the debounced write's window leaves messages of a topic whose config never reached
    topics.json: the topic comes back from its consume-queue files (covering its highest queue id), a deleted
    topic (empty queue directories) does not, and the restored table is written at once."""
    t = _table(tmp_path)
    t.create_in_send("Persisted", T.AUTO_CREATE_TOPIC, 4)
    t.save_now()
    cq = tmp_path / "consumequeue"
    for topic, qid in (("Persisted", 0), ("Unsaved", 0), ("Unsaved", 19), ("%RETRY%cg", 0)):
        (cq / topic / str(qid)).mkdir(parents=True)
        (cq / topic / str(qid) / "00000000000000000000").write_bytes(b"\0" * 20)
    (cq / "Deleted" / "0").mkdir(parents=True)  # delete_topics removes the files, not the directories
    t2 = _table(tmp_path)
    unsaved, retry, persisted = t2.get("Unsaved"), t2.get("%RETRY%cg"), t2.get("Persisted")
    assert unsaved is not None and unsaved.read_queue_nums == unsaved.write_queue_nums == 20
    assert retry is not None and retry.read_queue_nums == 1
    assert persisted is not None and persisted.read_queue_nums == 4  # a persisted config is not touched
    assert "Deleted" not in t2
    on_disk = json.loads((tmp_path / "config" / "topics.json").read_text())["topicConfigTable"]
    assert "Unsaved" in on_disk and "%RETRY%cg" in on_disk
