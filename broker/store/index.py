"""IndexService: the key / unique-key index (QUERY_MESSAGE), in RocketMQ's IndexFile layout.

Files: ``index/<20-digit creation time ms>``. Each is a hash table with chained entries (big-endian)::

    header (40 B):  int64 beginTimestamp | int64 endTimestamp | int64 beginPhyOffset | int64 endPhyOffset |
                    int32 hashSlotCount  | int32 indexCount
    slots:          hashSlotNum x int32   (number of the newest entry of that slot; 0 = empty)
    entries:        indexNum x (int32 keyHash | int64 phyOffset | int32 timeDiffSeconds | int32 prevIndex)

Entry numbers start at 1 (0 means "none"). A key is ``topic#key`` for every KEYS item and ``topic#uniqKey`` for the
UNIQ_KEY property. Differences from RocketMQ's file (nothing outside this store reads it): ``keyHash`` is
``crc32(utf-8 key) & 0x7FFFFFFF`` (never 0), not Java's ``hashCode`` — C speed on the dispatch path; and the header
is written when the file is flushed, not after every entry. A header left stale by a crash is repaired on load by
walking the entries past ``indexCount`` (an entry is never all zeros).

Space: a new file gets its header and slot table allocated (``posix_fallocate``) at creation and its entries
``GROW`` bytes at a time ahead of the writer, so no store through the mapping lands in an unbacked page (a SIGBUS
on a full disk). When the disk has no room, the entries of that message are skipped — the index is derived data:
the message is stored and consumable, only not findable by key — with one WARNING per episode and a count
(``skipped``).

A lookup walks the chain of ``hash % slots`` and returns candidate physical offsets whose store time is in range;
the caller checks each message really carries the key (hashes collide).
"""

from __future__ import annotations

import errno
import logging
import os
import struct
import sys
from collections.abc import Callable
from typing import Final, cast

from broker.store.mapped_file import MappedFile
from broker.store.struct_runs import repeated
from protocol.crc import crc32

HEADER: Final = struct.Struct(">qqqqii")
assert HEADER.size == 40
SLOT: Final = struct.Struct(">i")
assert SLOT.size == 4
ENTRY: Final = struct.Struct(">iqii")
assert ENTRY.size == 20
GROW: Final = 256 * 1024  # entries area allocated this far ahead of the writer

_log = logging.getLogger("rocketq.store.index")
_NO_SPACE: Final = frozenset({errno.ENOSPC, errno.EDQUOT})


_SWAP: Final = sys.byteorder == "little"  # slots are big-endian on disk


def key_hash(key: str) -> int:
    return (crc32(key.encode()) & 0x7FFFFFFF) or 1


_crc32 = crc32


class IndexFile:
    __slots__ = ("base", "begin_phy", "begin_ts", "count", "end_phy", "end_ts", "max_index", "mf", "name_ts", "slots")

    def __init__(self, path: str, name_ts: int, slots: int, max_index: int) -> None:
        size = HEADER.size + slots * SLOT.size + max_index * ENTRY.size
        existed = os.path.exists(path)
        self.mf = MappedFile(path, 0, size)
        self.slots = slots
        self.max_index = max_index
        self.name_ts = name_ts
        self.base = HEADER.size + slots * SLOT.size
        # header and slots get their blocks before anything reads or writes them (a no-op where they have them)
        self.mf.allocated = 0
        try:
            self.mf.reserve(self.base + GROW)
        except OSError:
            if existed:
                self.mf.close()
            else:
                self.mf.destroy()
            raise
        begin_ts, end_ts, begin_phy, end_phy, _slot_count, count = HEADER.unpack_from(self.mf.buf, 0)
        self.begin_ts: int = begin_ts
        self.end_ts: int = end_ts
        self.begin_phy: int = begin_phy
        self.end_phy: int = end_phy
        self.count: int = max(int(count), 1)
        if not self._grow(self.count + 1):  # entries written before a restart, and the next one
            self.max_index = self.count  # an old file that cannot get its space takes no more entries
        else:
            self._repair()

    def _grow(self, n: int) -> bool:
        """Entries ``< n`` are backed by blocks (allocating ``GROW`` more when needed); False when the disk is full
        (logged by the caller)."""
        need = self.base + n * ENTRY.size
        if need <= self.mf.allocated:
            return True
        try:
            self.mf.reserve(need + GROW)
        except OSError as exc:
            if exc.errno not in _NO_SPACE:
                raise
            return False
        return True

    def _repair(self) -> None:
        """Count the entries written after the header was last saved (a crash between two flushes)."""
        buf = self.mf.buf
        n = self.count
        while n < self.max_index:
            h, phys, diff, prev = ENTRY.unpack_from(buf, self.base + n * ENTRY.size)
            if h == 0 or prev >= n or prev < 0:
                break
            self.end_phy = max(self.end_phy, phys)
            self.end_ts = max(self.end_ts, self.begin_ts + diff * 1000)
            n += 1
        self.count = n

    @property
    def is_full(self) -> bool:
        return self.count >= self.max_index

    def put(self, h: int, phys: int, store_ts: int) -> bool:
        """Add an entry for key hash ``h``; False when the file is full."""
        n = self.count
        if n >= self.max_index:
            return False
        if self.base + (n + 1) * ENTRY.size > self.mf.allocated and not self._grow(n + 1):
            raise OSError(errno.ENOSPC, "no space for index entries")
        buf = self.mf.buf
        slot_pos = HEADER.size + (h % self.slots) * 4
        (prev,) = SLOT.unpack_from(buf, slot_pos)
        if self.begin_ts == 0:
            self.begin_ts = store_ts
            self.begin_phy = phys
            # the base of every entry's time: on disk before the first entry, so a crash never loses it
            HEADER.pack_into(buf, 0, store_ts, store_ts, phys, phys, 0, 1)
        diff = (store_ts - self.begin_ts) // 1000
        if diff < 0:
            diff = 0
        elif diff > 0x7FFFFFFF:
            diff = 0x7FFFFFFF
        ENTRY.pack_into(buf, self.base + n * 20, h, phys, diff, prev)
        SLOT.pack_into(buf, slot_pos, n)
        self.count = n + 1
        if store_ts > self.end_ts:
            self.end_ts = store_ts
        if phys > self.end_phy:
            self.end_phy = phys
        return True

    def put_many(self, hashes: list[int], physs: list[int], start: int, store_ts: int) -> int:
        """``put`` for the entries ``start:`` of ``hashes`` / ``physs`` (key hash, physical offset), all with one
        store time; returns the index of the first entry not written (the file is full) or ``len(hashes)``.

        The entries of one call are consecutive in the file: each slot is read and re-pointed in entry order (entries
        of one batch may share a slot), then all the entries are packed by one ``struct`` call (``repeated``: their
        fields interleaved by slice assignments, no object per entry) straight into the mapping."""
        n = self.count
        room = self.max_index - n
        if room <= 0:
            return start
        stop = min(len(hashes), start + room)
        if stop <= start:
            return start
        k = stop - start
        if self.base + (n + k) * ENTRY.size > self.mf.allocated and not self._grow(n + k):
            raise OSError(errno.ENOSPC, "no space for index entries")
        buf = self.mf.buf
        if self.begin_ts == 0:
            self.begin_ts = store_ts
            self.begin_phy = physs[start]
            HEADER.pack_into(buf, 0, store_ts, store_ts, self.begin_phy, self.begin_phy, 0, 1)
        diff = (store_ts - self.begin_ts) // 1000
        diff = 0 if diff < 0 else min(diff, 0x7FFFFFFF)
        if start or stop < len(hashes):
            hashes = hashes[start:stop]
            physs = physs[start:stop]
        slots = self.slots
        flat: list[int] = [diff] * (4 * k)  # hash, phys, diff, prev per entry
        flat[0::4] = hashes
        flat[1::4] = physs
        e = n
        j = 3
        # the slot table as native unsigned ints: an item get and set per entry, byte-swapped by arithmetic on a
        # little-endian host (compiled: ~60 ns less per entry than a struct unpack and pack into the mapping)
        table = buf[HEADER.size : self.base].cast("I")
        try:
            if _SWAP:
                for h in hashes:
                    s = h % slots
                    v: int = table[s]
                    flat[j] = (v >> 24) & 0xFF | (v >> 8) & 0xFF00 | (v << 8) & 0xFF0000 | (v << 24) & 0xFF000000
                    table[s] = (e >> 24) & 0xFF | (e >> 8) & 0xFF00 | (e << 8) & 0xFF0000 | (e << 24) & 0xFF000000
                    e += 1
                    j += 4
            else:
                for h in hashes:
                    s = h % slots
                    flat[j] = table[s]
                    table[s] = e
                    e += 1
                    j += 4
        finally:
            table.release()
        repeated(ENTRY, k).pack_into(buf, self.base + n * 20, *flat)
        self.count = e
        if store_ts > self.end_ts:
            self.end_ts = store_ts
        last = physs[-1]
        if last > self.end_phy:
            self.end_phy = last
        return stop

    def lookup(self, key: str, begin: int, end: int, limit: int, out: list[int]) -> None:
        if self.begin_ts == 0 or self.end_ts < begin or self.begin_ts > end:
            return
        buf = self.mf.buf
        h = key_hash(key)
        (n,) = SLOT.unpack_from(buf, HEADER.size + (h % self.slots) * 4)
        seen = 0
        while 0 < n < self.count and len(out) < limit and seen < self.max_index:
            eh, phys, diff, prev = ENTRY.unpack_from(buf, self.base + n * ENTRY.size)
            ts = self.begin_ts + diff * 1000
            if eh == h and begin - 1000 <= ts <= end + 1000:
                out.append(phys)
            if prev >= n:  # chains only go back; anything else is a damaged entry
                break
            n = prev
            seen += 1

    def write_header(self) -> None:
        HEADER.pack_into(self.mf.buf, 0, self.begin_ts, self.end_ts, self.begin_phy, self.end_phy, 0, self.count)

    def flush(self) -> None:
        self.write_header()
        self.mf.sync()

    def close(self) -> None:
        self.write_header()
        self.mf.close()

    def destroy(self) -> None:
        self.mf.destroy()


class IndexService:
    __slots__ = ("_prefix_crc", "dir", "files", "max_index", "no_space", "skipped", "slots")

    def __init__(self, directory: str, slots: int, max_index: int) -> None:
        self.dir = directory
        self.slots = slots
        self.max_index = max_index
        self.files: list[IndexFile] = []
        # crc32 of "topic#" per topic: crc32(key, crc32(b"topic#")) == crc32(b"topic#key"), without building it
        self._prefix_crc: dict[str, int] = {}
        self.skipped = 0  # messages not indexed because the disk was full
        self.no_space = False  # in a full-disk episode (one warning each)

    def _full(self, exc: OSError, what: str) -> None:
        if exc.errno not in _NO_SPACE:
            raise exc
        self.skipped += 1
        if not self.no_space:
            self.no_space = True
            _log.warning("disk full: %s not indexed (stored and consumable, not findable by key): %s", what, exc)

    def load(self, on_repair: Callable[[str], None] | None = None) -> int | None:
        """Map the index files. A file of the wrong size or with an impossible header is damaged: it and every
        later file are removed (one line through ``on_repair``) and the commit-log offset from which the index
        must be rebuilt is returned (None when nothing is damaged)."""
        if not os.path.isdir(self.dir):
            return None
        size = HEADER.size + self.slots * SLOT.size + self.max_index * ENTRY.size
        for name in sorted(n for n in os.listdir(self.dir) if n.isdigit()):
            path = os.path.join(self.dir, name)
            bad = os.path.getsize(path) != size
            try:
                f = IndexFile(path, int(name), self.slots, self.max_index)
            except OSError as exc:  # a full disk at start-up: the file stays, unread, until there is room
                _log.warning("index file %s not loaded (no space to back it): %s", path, exc)
                continue
            bad = bad or f.count > self.max_index or f.end_phy < f.begin_phy or f.end_ts < f.begin_ts
            if bad:
                later = sorted(n for n in os.listdir(self.dir) if n.isdigit() and int(n) >= int(name))
                f.destroy()
                for n in later:
                    if n != name:
                        os.unlink(os.path.join(self.dir, n))
                rebuild_from = self.files[-1].end_phy + 1 if self.files else 0
                if on_repair is not None:
                    on_repair(
                        f"index file {path} damaged (size or header): it and {len(later) - 1} later files removed, rebuilt from commit-log offset {rebuild_from}"
                    )
                return rebuild_from
            self.files.append(f)
        return None

    @property
    def max_phy_offset(self) -> int:
        return self.files[-1].end_phy if self.files else -1

    def truncate_beyond(self, commit_log_end: int) -> None:
        """Drop index files holding entries past the commit-log end (their chains cannot be edited safely); the
        recovery re-dispatch rebuilds them."""
        while self.files and self.files[-1].end_phy >= commit_log_end and self.files[-1].count > 1:
            self.files.pop().destroy()

    def _writable(self, store_ts: int) -> IndexFile:
        if not self.files or self.files[-1].is_full:
            os.makedirs(self.dir, exist_ok=True)
            name = max(store_ts, self.files[-1].name_ts + 1 if self.files else 0)
            if self.files:
                self.files[-1].write_header()
            self.files = [
                *self.files,
                IndexFile(os.path.join(self.dir, f"{name:020d}"), name, self.slots, self.max_index),
            ]
        return self.files[-1]

    def put(self, topic: str, keys: str | None, uniq_key: str | None, phys: int, store_ts: int) -> None:
        """Index one message: every space-separated item of ``keys`` and the ``uniq_key`` (skipped, counted, on a
        full disk)."""
        try:
            self._put(topic, keys, uniq_key, phys, store_ts)
        except OSError as exc:
            self._full(exc, f"message at commit-log offset {phys}")
            return
        self.no_space = False

    def _put(self, topic: str, keys: str | None, uniq_key: str | None, phys: int, store_ts: int) -> None:
        files = self.files
        if files:
            last = files[-1]
            if phys <= last.end_phy and last.count > 1:
                return  # already indexed (re-dispatch after recovery)
        else:
            last = self._writable(store_ts)
        prefix = self._prefix_crc.get(topic)
        if prefix is None:
            if len(self._prefix_crc) >= 65536:
                self._prefix_crc.clear()
            prefix = self._prefix_crc[topic] = _crc32(f"{topic}#".encode())
        if keys:
            for k in keys.split(" ") if " " in keys else (keys,):
                if k:
                    h = (_crc32(k.encode(), prefix) & 0x7FFFFFFF) or 1
                    if not last.put(h, phys, store_ts):
                        last = self._writable(store_ts)
                        last.put(h, phys, store_ts)
        if uniq_key:
            h = (_crc32(uniq_key.encode(), prefix) & 0x7FFFFFFF) or 1
            if not last.put(h, phys, store_ts):
                last = self._writable(store_ts)
                last.put(h, phys, store_ts)

    def put_keys(
        self, topic: str, keys: list[str | None] | None, uniqs: list[str | None], physs: list[int], store_ts: int
    ) -> None:
        """Index the messages of one append as columns: each one's KEYS (``keys`` None: none has any), UNIQ_KEY and
        physical offset (increasing; one store time). The key hashes of all of them first, then one write loop
        (``IndexFile.put_many``). Skipped, counted, on a full disk."""
        try:
            self._put_keys(topic, keys, uniqs, physs, store_ts)
        except OSError as exc:
            self._full(exc, f"batch at commit-log offset {physs[0]}")
            return
        self.no_space = False

    def _put_keys(
        self, topic: str, keys: list[str | None] | None, uniqs: list[str | None], physs: list[int], store_ts: int
    ) -> None:
        files = self.files
        if files and physs[0] <= files[-1].end_phy and files[-1].count > 1:
            for i, phys in enumerate(physs):  # re-dispatch after recovery: put skips what is indexed already
                self._put(topic, keys[i] if keys is not None else None, uniqs[i], phys, store_ts)
            return
        prefix = self._prefix_crc.get(topic)
        if prefix is None:
            if len(self._prefix_crc) >= 65536:
                self._prefix_crc.clear()
            prefix = self._prefix_crc[topic] = _crc32(f"{topic}#".encode())
        hashes: list[int] = []
        add_hash = hashes.append
        at = physs
        if keys is None and all(uniqs):  # unique keys only, one each (a producer's batch): physs as they are
            for uniq in cast(list[str], uniqs):
                add_hash((_crc32(uniq.encode(), prefix) & 0x7FFFFFFF) or 1)
        else:
            at = []
            add_phys = at.append
            for i, phys in enumerate(physs):
                ks = keys[i] if keys is not None else None
                if ks:
                    for k in ks.split(" ") if " " in ks else (ks,):
                        if k:
                            add_hash((_crc32(k.encode(), prefix) & 0x7FFFFFFF) or 1)
                            add_phys(phys)
                u = uniqs[i]
                if u:
                    add_hash((_crc32(u.encode(), prefix) & 0x7FFFFFFF) or 1)
                    add_phys(phys)
        done = 0
        stuck = False
        while done < len(hashes):
            nxt = self._writable(store_ts).put_many(hashes, at, done, store_ts)
            if nxt == done:  # a full file: the next _writable rolls; a new file that takes nothing ends it
                if stuck:
                    return
                stuck = True
            done = nxt

    def query(self, topic: str, key: str, max_num: int, begin: int, end: int) -> list[int]:
        out: list[int] = []
        for f in reversed(self.files):
            f.lookup(f"{topic}#{key}", begin, end, max_num, out)
            if len(out) >= max_num:
                break
        return out

    def delete_before(self, commit_log_min: int) -> list[IndexFile]:
        """Drop (from the service) the index files that only point before ``commit_log_min``; the caller destroys
        the returned files."""
        gone: list[IndexFile] = []
        files = self.files
        while len(files) > 1 and files[0].end_phy < commit_log_min:
            gone.append(files[0])
            files = files[1:]
        self.files = files
        return gone

    def flush(self) -> None:
        """Write the headers and sync the files that can have new entries (blocking: the flush executor)."""
        for f in self.files[-2:]:
            f.flush()

    def close(self) -> None:
        for f in self.files:
            f.close()
        self.files = []
