"""The epoch file of controller mode (J's ``EpochFileCache`` over a ``CheckpointFile``): which master epoch wrote
which range of the commit log, as ``<epoch, startOffset>`` entries — an epoch's range ends where the next one
starts (the last one is open). A new master appends ``<newEpoch, its log end>``; an old master that rejoins as a
slave compares its entries with its new master's to find where the two logs stop agreeing (``consistent_point``)
and truncates there.

File ``<storePathRootDir>/epochFileCheckpoint`` (J's ``storePathEpochFile`` default), text, J's layout byte for
byte (a J broker reads ours and the other way round):

======  =====================================  ===============================================================
line    content                                meaning
======  =====================================  ===============================================================
1       ``N``                                  number of entries
2       ``crc``                                CRC-32 (zlib's) of the entry lines below, each with its
                                               ``\\n``, as a signed 31-bit value (``crc & 0x7FFFFFFF``); 0 =
                                               not checked
3..N+2  ``<epoch>-<startOffset>``              one entry, epochs and start offsets strictly increasing
======  =====================================  ===============================================================

Writes are crash-safe: the new text goes to ``<file>.tmp`` (fsync), the current file is kept as ``<file>.bak``, and
the temp file is renamed over the file (then the directory is fsynced). Reading falls back to ``.bak`` when the file
is missing, empty, torn or fails its count or CRC — so a crash at any point leaves the old or the new table.
"""

from __future__ import annotations

import contextlib
import logging
import os
from dataclasses import dataclass
from itertools import pairwise
from typing import Final

from protocol.crc import crc32
from runtime.fsync_dir import fsync_directory

_log = logging.getLogger("rocketq.broker.ha.epoch")

FILE_NAME: Final = "epochFileCheckpoint"
OPEN_END: Final = 2**63 - 1  # J's Long.MAX_VALUE: the last epoch's range has no end yet


class EpochFileError(ValueError):
    """The file (and its backup) could not be read as an epoch table."""


@dataclass(frozen=True, slots=True)
class EpochEntry:
    epoch: int
    start_offset: int
    end_offset: int = OPEN_END


def entries_of(pairs: list[tuple[int, int]]) -> list[EpochEntry]:
    """``<epoch, startOffset>`` pairs as entries with their ends (the next entry's start; the last is open)."""
    out: list[EpochEntry] = []
    for i, (epoch, start) in enumerate(pairs):
        end = pairs[i + 1][1] if i + 1 < len(pairs) else OPEN_END
        out.append(EpochEntry(epoch, start, end))
    return out


def encode(pairs: list[tuple[int, int]]) -> bytes:
    lines = "".join(f"{e}-{s}\n" for e, s in pairs)
    return f"{len(pairs)}\n{crc32(lines.encode()) & 0x7FFFFFFF}\n{lines}".encode()


def decode(data: bytes) -> list[tuple[int, int]]:
    """Parse the file's text; raises EpochFileError for anything but a whole, valid table."""
    try:
        text = data.decode()
        head, _, rest = text.partition("\n")
        crc_line, _, body = rest.partition("\n")
        count, crc = int(head), int(crc_line)
    except (UnicodeDecodeError, ValueError):
        raise EpochFileError("not an epoch file (count and CRC lines)") from None
    pairs: list[tuple[int, int]] = []
    for line in body.splitlines():
        epoch, sep, start = line.partition("-")
        if not sep:
            continue  # J's fromLine skips what does not split in two
        try:
            pairs.append((int(epoch), int(start)))
        except ValueError:
            raise EpochFileError(f"bad entry line {line!r}") from None
    if len(pairs) != count:
        raise EpochFileError(f"expected {count} entries, found {len(pairs)}")
    lines = "".join(line + "\n" for line in body.splitlines())
    if crc != 0 and crc32(lines.encode()) & 0x7FFFFFFF != crc:
        raise EpochFileError("entries fail their CRC")
    for (e1, s1), (e2, s2) in pairwise(pairs):
        if e2 <= e1 or s2 < s1:
            raise EpochFileError(f"entries out of order: {e1}-{s1} then {e2}-{s2}")
    return pairs


def consistent_point(local: list[EpochEntry], remote: list[EpochEntry]) -> int:
    """J's ``findConsistentPoint``: walking the local entries from the newest, the first epoch the remote table has
    with the same start offset; the logs agree up to the smaller of the two ends of that epoch's range. -1 when no
    epoch is shared (nothing can be trusted)."""
    by_epoch = {e.epoch: e for e in remote}
    for mine in reversed(local):
        theirs = by_epoch.get(mine.epoch)
        if theirs is not None and theirs.start_offset == mine.start_offset:
            return min(mine.end_offset, theirs.end_offset)
    return -1


def truncation_point(local: list[EpochEntry], local_end: int, remote: list[EpochEntry], remote_end: int) -> int:
    """Where a slave with ``local`` entries and a log ending at ``local_end`` must cut its log to follow a master
    with ``remote`` entries and a log ending at ``remote_end``: the consistent point, capped by both log ends (the
    last epoch of each is open). An empty local table (a replica that never saw an epoch) or empty log keeps
    nothing it cannot prove — 0 when the master's first epoch starts at 0, i.e. it holds the whole log."""
    if local_end == 0:
        return 0
    if not local:
        return -1
    point = consistent_point(local, remote)
    if point < 0:
        return -1
    return min(point, local_end, remote_end)


class EpochFile:
    """The table in memory and on disk; every change is written through before the call returns."""

    def __init__(self, directory: str) -> None:
        self.path = os.path.join(directory, FILE_NAME)
        self._pairs: list[tuple[int, int]] = []

    def load(self) -> None:
        """Read the file (or its backup); a missing file is an empty table. Raises EpochFileError when both are
        present but unreadable."""
        errors: list[str] = []
        for path in (self.path, self.path + ".bak"):
            try:
                with open(path, "rb") as f:
                    data = f.read()
            except FileNotFoundError:
                continue
            if not data:
                errors.append(f"{path}: empty")
                continue
            try:
                self._pairs = decode(data)
            except EpochFileError as exc:
                errors.append(f"{path}: {exc}")
                continue
            if errors:
                _log.warning("epoch file read from its backup: %s", "; ".join(errors))
            return
        if errors:
            raise EpochFileError("; ".join(errors))
        self._pairs = []

    # -- reads -----------------------------------------------------------------------------------------------------

    def entries(self) -> list[EpochEntry]:
        return entries_of(self._pairs)

    def pairs(self) -> list[tuple[int, int]]:
        return list(self._pairs)

    @property
    def last_epoch(self) -> int:
        return self._pairs[-1][0] if self._pairs else -1

    def find(self, offset: int) -> EpochEntry | None:
        """The entry whose range holds ``offset``."""
        for e in self.entries():
            if e.start_offset <= offset < e.end_offset:
                return e
        return None

    # -- writes ----------------------------------------------------------------------------------------------------

    def append(self, epoch: int, start_offset: int) -> bool:
        """Append ``<epoch, start_offset>``; False (nothing written) unless both grow — J's ``appendEntry``, except
        that an equal start offset replaces the last entry (an epoch that wrote nothing has no range to keep)."""
        if self._pairs:
            last_epoch, last_start = self._pairs[-1]
            if epoch <= last_epoch or start_offset < last_start:
                return False
            if start_offset == last_start:
                self._pairs[-1] = (epoch, start_offset)
                self._write()
                return True
        self._pairs.append((epoch, start_offset))
        self._write()
        return True

    def truncate_suffix_by_offset(self, offset: int) -> None:
        """Drop entries starting at or after ``offset`` (the log was cut there)."""
        kept = [p for p in self._pairs if p[1] < offset]
        if kept != self._pairs:
            self._pairs = kept
            self._write()

    def truncate_suffix_by_epoch(self, epoch: int) -> None:
        kept = [p for p in self._pairs if p[0] < epoch]
        if kept != self._pairs:
            self._pairs = kept
            self._write()

    def replace(self, pairs: list[tuple[int, int]]) -> None:
        """Adopt a whole table (a slave taking its master's history up to where its own log ends)."""
        if pairs != self._pairs:
            self._pairs = list(pairs)
            self._write()

    def _write(self) -> None:
        data = encode(self._pairs)
        tmp = self.path + ".tmp"
        directory = os.path.dirname(self.path) or "."
        os.makedirs(directory, exist_ok=True)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            os.write(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        if os.path.exists(self.path):
            with contextlib.suppress(FileNotFoundError):
                os.replace(self.path, self.path + ".bak")
        os.replace(tmp, self.path)
        fsync_directory(directory)
