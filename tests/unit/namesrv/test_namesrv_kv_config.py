"""KvConfig persistence: J's file format, atomic replace with .bak, fallback to .bak for a torn main file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from namesrv.kv_config import KvConfig, KvConfigError, load_table


@pytest.mark.asyncio
async def test_put_get_delete_persist(tmp_path: Path) -> None:
    path = tmp_path / "namesrv" / "kvConfig.json"
    kv = KvConfig.load(path)
    assert kv.get("ns", "k") is None and kv.namespace("ns") is None
    await kv.put("ns", "k", "v1")
    await kv.put("ns", "k", "v2")
    assert json.loads(path.read_text()) == {"configTable": {"ns": {"k": "v2"}}}
    assert json.loads((tmp_path / "namesrv" / "kvConfig.json.bak").read_text()) == {"configTable": {"ns": {"k": "v1"}}}
    assert not (tmp_path / "namesrv" / "kvConfig.json.tmp").exists()
    await kv.delete("ns", "k")
    assert KvConfig.load(path).namespace("ns") == {}


@pytest.mark.asyncio
async def test_torn_main_file_falls_back_to_bak(tmp_path: Path) -> None:
    path = tmp_path / "kvConfig.json"
    kv = KvConfig.load(path)
    await kv.put("ns", "k", "old")
    await kv.put("ns", "k", "new")
    path.write_bytes(path.read_bytes()[:10])  # torn
    assert KvConfig.load(path).get("ns", "k") == "old"
    path.unlink()  # crash between the two renames
    assert KvConfig.load(path).get("ns", "k") == "old"


def test_unusable_files_fail_loudly(tmp_path: Path) -> None:
    path = tmp_path / "kvConfig.json"
    path.write_text("{garbage")
    with pytest.raises(KvConfigError, match="not valid JSON"):
        load_table(path)


def test_loads_a_j_file(tmp_path: Path) -> None:
    path = tmp_path / "kvConfig.json"
    path.write_text('{"configTable":{"ORDER_TOPIC_CONFIG":{"TopicOrder":"broker-a:4"}}}')
    assert KvConfig.load(path).get("ORDER_TOPIC_CONFIG", "TopicOrder") == "broker-a:4"
