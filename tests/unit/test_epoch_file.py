"""The controller-mode epoch file (``broker.ha.epoch_file``): J's text layout, crash-safe writes with a backup,
J's ``EpochFileCache`` append/truncate rules, and where a rejoining replica's log diverges from its new master's."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from broker.ha.epoch_file import (
    FILE_NAME,
    OPEN_END,
    EpochEntry,
    EpochFile,
    EpochFileError,
    consistent_point,
    decode,
    encode,
    entries_of,
    truncation_point,
)
from protocol.crc import crc32


def test_layout_is_javas_checkpoint_file(tmp_path: Path) -> None:
    f = EpochFile(str(tmp_path))
    assert f.append(1, 0) and f.append(3, 4096)
    lines = "1-0\n3-4096\n"
    assert (tmp_path / FILE_NAME).read_bytes() == f"2\n{crc32(lines.encode()) & 0x7FFFFFFF}\n{lines}".encode()
    again = EpochFile(str(tmp_path))
    again.load()
    assert again.entries() == [EpochEntry(1, 0, 4096), EpochEntry(3, 4096, OPEN_END)]
    assert again.last_epoch == 3


def test_a_crc_of_zero_is_not_checked_and_a_wrong_one_is_refused() -> None:
    assert decode(b"1\n0\n5-100\n") == [(5, 100)]
    with pytest.raises(EpochFileError, match="CRC"):
        decode(b"1\n12345\n5-100\n")
    with pytest.raises(EpochFileError, match="expected 2 entries"):
        decode(encode([(5, 100)]).replace(b"1\n", b"2\n", 1))


def test_append_needs_growing_epoch_and_offset(tmp_path: Path) -> None:
    f = EpochFile(str(tmp_path))
    assert f.append(2, 100)
    assert not f.append(2, 200)  # same epoch
    assert not f.append(1, 300)  # older epoch
    assert not f.append(3, 50)  # offset going back
    assert f.append(3, 100)  # epoch 2 wrote nothing: epoch 3 replaces it
    assert f.pairs() == [(3, 100)]


def test_torn_write_falls_back_to_the_backup(tmp_path: Path) -> None:
    f = EpochFile(str(tmp_path))
    f.append(1, 0)
    f.append(2, 500)
    path = tmp_path / FILE_NAME
    assert (tmp_path / (FILE_NAME + ".bak")).read_bytes() == encode([(1, 0)])
    path.write_bytes(path.read_bytes()[:7])  # a crash mid-write of the newest table
    g = EpochFile(str(tmp_path))
    g.load()
    assert g.pairs() == [(1, 0)]
    os.remove(path)  # a crash between keeping the backup and renaming the new file in
    h = EpochFile(str(tmp_path))
    h.load()
    assert h.pairs() == [(1, 0)]
    (tmp_path / (FILE_NAME + ".bak")).write_bytes(b"garbage")
    path.write_bytes(b"")
    with pytest.raises(EpochFileError):
        EpochFile(str(tmp_path)).load()


def test_truncate_suffix(tmp_path: Path) -> None:
    f = EpochFile(str(tmp_path))
    for e, s in ((1, 0), (2, 100), (4, 300)):
        f.append(e, s)
    f.truncate_suffix_by_offset(300)
    assert f.pairs() == [(1, 0), (2, 100)]
    f.truncate_suffix_by_epoch(2)
    assert f.pairs() == [(1, 0)]
    assert f.find(5000) == EpochEntry(1, 0, OPEN_END)


def test_consistent_point_is_javas() -> None:
    # J's EpochFileCacheTest: local {1-0, 2-100, 3-200}, remote {1-0, 2-100, 4-150}: epoch 2 is shared, its range
    # ends at 200 locally and at 150 remotely
    local = entries_of([(1, 0), (2, 100), (3, 200)])
    remote = entries_of([(1, 0), (2, 100), (4, 150)])
    assert consistent_point(local, remote) == 150
    # same epoch, other start: not shared; nothing shared at all: -1
    assert consistent_point(entries_of([(1, 0), (2, 120)]), remote) == 100
    assert consistent_point(entries_of([(7, 0)]), remote) == -1


def test_truncation_point_of_a_deposed_master() -> None:
    # the old master wrote 1000..1500 in epoch 1 that no slave got; the new master took over at 1000 (epoch 2)
    old = entries_of([(1, 0)])
    new = entries_of([(1, 0), (2, 1000)])
    assert truncation_point(old, 1500, new, 1800) == 1000
    # a replica that is only behind keeps everything
    assert truncation_point(old, 800, new, 1800) == 800
    # the same epoch on both: the smaller end wins (a slave cannot hold more than its master of one epoch)
    assert truncation_point(entries_of([(1, 0), (2, 1000)]), 1700, new, 1800) == 1700
    # a deposed master that took over and lost it again: epochs 1, 3 (its own, unreplicated) vs 1, 2, 4
    assert (
        truncation_point(entries_of([(1, 0), (3, 900)]), 1200, entries_of([(1, 0), (2, 700), (4, 1000)]), 1300) == 700
    )
    # an empty replica starts from nothing; a log with no shared epoch cannot be trusted
    assert truncation_point([], 0, new, 1800) == 0
    assert truncation_point([], 500, new, 1800) == -1
    assert truncation_point(entries_of([(9, 0)]), 500, new, 1800) == -1
