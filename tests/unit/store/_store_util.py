"""Shared helpers for the message-store tests: small configs, a put helper and a get-all helper."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

from broker.store import GetMessageStatus, MessageStore, StoreConfig
from broker.store.request import GetRequest, PutRequest
from protocol.message_ext import MessageExt

BORN = ("10.1.2.3", 5555)


def small_config(root: Path | str, **kw: Any) -> StoreConfig:
    base: dict[str, Any] = {
        "store_path_root_dir": str(root),
        "mapped_file_size_commit_log": 64 * 1024,
        "mapped_file_size_consume_queue": 100 * 20,
        "max_hash_slot_num": 512,
        "max_index_num": 2048,
        "store_host": ("10.0.0.9", 10911),
    }
    base.update(kw)
    return StoreConfig(**base)


async def put(
    store: MessageStore,
    topic: str,
    qid: int,
    body: bytes,
    props: dict[str, str] | None = None,
    *,
    flag: int = 0,
    sys_flag: int = 0,
    wait: bool = True,
):
    res = await store.put_message(
        PutRequest(topic, qid, flag, sys_flag, 1_700_000_000_000, BORN, body, props or {}), wait=wait
    )
    assert res.ok, res
    return res.items[0]


def get_all(store: MessageStore, topic: str, qid: int, start: int = 0) -> list[MessageExt]:
    """Pull from ``start`` until OFFSET_OVERFLOW_ONE; checks the next-offset progression on the way."""
    out: list[MessageExt] = []
    off = start
    while True:
        r = store.get_message_sync(GetRequest("g", topic, qid, off, 32))
        if r.status is not GetMessageStatus.FOUND:
            assert r.status is GetMessageStatus.OFFSET_OVERFLOW_ONE, r.status
            assert r.next_begin_offset == off
            return out
        msgs = r.messages()
        assert [m.queue_offset for m in msgs] == r.queue_offsets == list(range(off, off + len(msgs)))
        assert r.next_begin_offset == off + len(msgs)
        out.extend(msgs)
        off = r.next_begin_offset


def digest(body: bytes) -> str:
    return hashlib.sha256(body).hexdigest()[:16]


def commit_log_files(root: Path | str) -> list[str]:
    d = os.path.join(str(root), "commitlog")
    return sorted(os.path.join(d, n) for n in os.listdir(d))
