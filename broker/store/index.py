"""IndexService: the key / unique-key index (QUERY_MESSAGE), in RocketMQ's IndexFile layout.

Each index file, named by its creation time in ms, is a hash table with chained entries (big-endian)::

    header (40 B):  int64 beginTimestamp | int64 endTimestamp | int64 beginPhyOffset | int64 endPhyOffset |
                    int32 hashSlotCount  | int32 indexCount
    slots:          hashSlotNum x int32   (number of the newest entry of that slot; 0 = empty)
    entries:        indexNum x (int32 keyHash | int64 phyOffset | int32 timeDiffSeconds | int32 prevIndex)

Entry numbers start at 1 (0 means "none"). A key is ``topic#key`` for every KEYS item and ``topic#uniqKey`` for the
UNIQ_KEY property. A lookup walks the chain of ``hash % slots`` and returns candidate physical offsets whose store
time is in range; the caller checks each message really carries the key (hashes collide).
"""

from __future__ import annotations

import os
import struct
from typing import Final

from broker.store.mapped_file import MappedFile
from protocol.message import tag_hash

HEADER: Final = struct.Struct(">qqqqii")
assert HEADER.size == 40
SLOT: Final = struct.Struct(">i")
ENTRY: Final = struct.Struct(">iqii")
assert ENTRY.size == 20


def key_hash(key: str) -> int:
    return abs(tag_hash(key)) & 0x7FFFFFFF


class IndexFile:
    __slots__ = ("begin_phy", "begin_ts", "count", "end_phy", "end_ts", "mf", "slots", "max_index", "name_ts")

    def __init__(self, path: str, name_ts: int, slots: int, max_index: int) -> None:
        size = HEADER.size + slots * 4 + max_index * ENTRY.size
        self.mf = MappedFile(path, 0, size)
        self.slots = slots
        self.max_index = max_index
        self.name_ts = name_ts
        begin_ts, end_ts, begin_phy, end_phy, _slot_count, count = HEADER.unpack_from(self.mf.buffer(), 0)
        self.begin_ts: int = begin_ts
        self.end_ts: int = end_ts
        self.begin_phy: int = begin_phy
        self.end_phy: int = end_phy
        self.count: int = max(int(count), 1)

    @property
    def is_full(self) -> bool:
        return self.count >= self.max_index

    def put(self, key: str, phys: int, store_ts: int) -> bool:
        if self.is_full:
            return False
        buf = self.mf.buffer()
        h = key_hash(key)
        slot_pos = HEADER.size + (h % self.slots) * 4
        (prev,) = SLOT.unpack_from(buf, slot_pos)
        if self.begin_ts == 0:
            self.begin_ts = store_ts
            self.begin_phy = phys
        diff = max(0, (store_ts - self.begin_ts) // 1000)
        n = self.count
        ENTRY.pack_into(buf, HEADER.size + self.slots * 4 + n * ENTRY.size, h, phys, min(diff, 0x7FFFFFFF), prev)
        SLOT.pack_into(buf, slot_pos, n)
        self.count = n + 1
        self.end_ts = max(self.end_ts, store_ts)
        self.end_phy = max(self.end_phy, phys)
        HEADER.pack_into(buf, 0, self.begin_ts, self.end_ts, self.begin_phy, self.end_phy, 0, self.count)
        return True

    def lookup(self, key: str, begin: int, end: int, limit: int, out: list[int]) -> None:
        if self.begin_ts == 0 or self.end_ts < begin or self.begin_ts > end:
            return
        buf = self.mf.buffer()
        h = key_hash(key)
        (n,) = SLOT.unpack_from(buf, HEADER.size + (h % self.slots) * 4)
        base = HEADER.size + self.slots * 4
        seen = 0
        while 0 < n < self.count and len(out) < limit and seen < self.max_index:
            eh, phys, diff, prev = ENTRY.unpack_from(buf, base + n * ENTRY.size)
            ts = self.begin_ts + diff * 1000
            if eh == h and begin - 1000 <= ts <= end + 1000:
                out.append(phys)
            n = prev
            seen += 1

    def flush(self) -> None:
        self.mf.wrote = self.mf.size
        self.mf.flush()

    def close(self) -> None:
        self.mf.close()

    def destroy(self) -> None:
        self.mf.destroy()


class IndexService:
    __slots__ = ("dir", "files", "max_index", "slots")

    def __init__(self, directory: str, slots: int, max_index: int) -> None:
        self.dir = directory
        self.slots = slots
        self.max_index = max_index
        self.files: list[IndexFile] = []

    def load(self) -> None:
        if not os.path.isdir(self.dir):
            return
        for name in sorted(n for n in os.listdir(self.dir) if n.isdigit()):
            self.files.append(IndexFile(os.path.join(self.dir, name), int(name), self.slots, self.max_index))

    @property
    def max_phy_offset(self) -> int:
        return self.files[-1].end_phy if self.files else -1

    def truncate_beyond(self, commit_log_end: int) -> None:
        """Drop index files holding entries past the commit-log end (their chains cannot be edited safely); the
        recovery re-dispatch rebuilds them."""
        while self.files and self.files[-1].end_phy >= commit_log_end:
            self.files.pop().destroy()

    def _writable(self, store_ts: int) -> IndexFile:
        if not self.files or self.files[-1].is_full:
            os.makedirs(self.dir, exist_ok=True)
            name = max(store_ts, self.files[-1].name_ts + 1 if self.files else 0)
            self.files.append(IndexFile(os.path.join(self.dir, f"{name:020d}"), name, self.slots, self.max_index))
        return self.files[-1]

    def put(self, topic: str, keys: list[str], uniq_key: str | None, phys: int, store_ts: int) -> None:
        if self.files and phys <= self.files[-1].end_phy and self.files[-1].count > 1:
            return  # already indexed (re-dispatch after recovery)
        for k in keys:
            self._put(f"{topic}#{k}", phys, store_ts)
        if uniq_key:
            self._put(f"{topic}#{uniq_key}", phys, store_ts)

    def _put(self, key: str, phys: int, store_ts: int) -> None:
        f = self._writable(store_ts)
        if not f.put(key, phys, store_ts):
            self._writable(store_ts).put(key, phys, store_ts)

    def query(self, topic: str, key: str, max_num: int, begin: int, end: int) -> list[int]:
        out: list[int] = []
        for f in reversed(self.files):
            f.lookup(f"{topic}#{key}", begin, end, max_num, out)
            if len(out) >= max_num:
                break
        return out

    def delete_before(self, commit_log_min: int) -> None:
        while len(self.files) > 1 and self.files[0].end_phy < commit_log_min:
            self.files.pop(0).destroy()

    def flush(self) -> None:
        for f in self.files[-2:]:
            f.flush()

    def close(self) -> None:
        for f in self.files:
            f.close()
        self.files = []
