"""Crash-test child: open a SYNC_FLUSH store and put messages until killed.

Usage: python _crash_child.py <store root> <producers>

Prints ``<producer> <queue offset> <commit-log offset> <digest>`` to stdout, flushed, for every put that returned
PUT_OK (an acknowledged, fsync'ed message). The body of message ``(producer, seq)`` is deterministic (see ``body``),
so the parent can check it byte for byte.
"""

from __future__ import annotations

import asyncio
import hashlib
import random
import sys


def body(producer: int, seq: int) -> bytes:
    rnd = random.Random(producer * 1_000_003 + seq)
    return b"p%d-s%d-" % (producer, seq) + rnd.randbytes(rnd.randrange(0, 3000))


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


async def main(root: str, producers: int) -> None:
    from broker.store import MessageStore, PutRequest, StoreConfig

    cfg = StoreConfig(
        store_path_root_dir=root,
        mapped_file_size_commit_log=64 * 1024,
        mapped_file_size_consume_queue=100 * 20,
        flush_disk_type="SYNC_FLUSH",
        max_hash_slot_num=512,
        max_index_num=4096,
    )
    store = MessageStore.open(cfg)
    await store.start()
    out = sys.stdout

    async def producer(p: int) -> None:
        seq = 0
        while True:
            data = body(p, seq)
            res = await store.put_message(
                PutRequest("CrashTopic", p, 0, 0, 0, ("127.0.0.1", 1), data, {"KEYS": f"p{p}s{seq}", "TAGS": f"T{p}"})
            )
            if not res.ok:
                raise SystemExit(f"put failed: {res}")
            it = res.items[0]
            out.write(f"{p} {seq} {it.queue_offset} {it.wrote_offset} {digest(data)}\n")
            out.flush()
            seq += 1

    await asyncio.gather(*(producer(p) for p in range(producers)))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], int(sys.argv[2])))
