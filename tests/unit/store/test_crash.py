"""Crash test with a real process: SIGKILL a SYNC_FLUSH writer mid-stream, reopen, every acknowledged message is
there byte for byte; then a deliberately torn tail is truncated and never served."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from _crash_child import body, digest
from _store_util import get_all

from broker.store import GetMessageStatus, MessageStore, StoreConfig
from broker.store.request import GetRequest, PutRequest

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
TOPIC = "CrashTopic"
PRODUCERS = 4


def _cfg(root: Path) -> StoreConfig:
    return StoreConfig(
        store_path_root_dir=str(root),
        mapped_file_size_commit_log=64 * 1024,
        mapped_file_size_consume_queue=100 * 20,
        flush_disk_type="SYNC_FLUSH",
        max_hash_slot_num=512,
        max_index_num=4096,
    )


def _run_and_kill(root: Path, acks_wanted: int) -> list[tuple[int, int, int, int, str]]:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.Popen(
        [sys.executable, str(HERE / "_crash_child.py"), str(root), str(PRODUCERS)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        cwd=str(REPO),
    )
    acked: list[tuple[int, int, int, int, str]] = []
    try:
        assert proc.stdout is not None
        while len(acked) < acks_wanted:
            line = proc.stdout.readline()
            if not line:
                err = proc.stderr.read().decode() if proc.stderr else ""
                pytest.fail(f"child exited early ({proc.wait()}): {err[-2000:]}")
            p, seq, qoff, phys, dig = line.split()
            acked.append((int(p), int(seq), int(qoff), int(phys), dig.decode()))
        proc.send_signal(signal.SIGKILL)  # mid-stream: producers are still putting
        # lines already written before the kill are acknowledgements too
        rest = proc.stdout.read()
        for line in rest.splitlines():
            parts = line.split()
            if len(parts) == 5:  # a line cut by the kill is not an ack
                p, seq, qoff, phys, dig = parts
                if len(dig) == 64:
                    acked.append((int(p), int(seq), int(qoff), int(phys), dig.decode()))
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        for f in (proc.stdout, proc.stderr):
            if f:
                f.close()
    assert proc.returncode == -signal.SIGKILL
    return acked


def _verify(store: MessageStore, acked: list[tuple[int, int, int, int, str]]) -> dict[int, int]:
    """Every ack is present byte for byte; returns the max offset per queue."""
    by_queue: dict[int, dict[int, tuple[int, int, str]]] = {}
    for p, seq, qoff, phys, dig in acked:
        assert qoff == seq  # one producer per queue
        by_queue.setdefault(p, {})[qoff] = (seq, phys, dig)
    maxes = {}
    for p, acks in by_queue.items():
        msgs = get_all(store, TOPIC, p)
        maxes[p] = len(msgs)
        assert len(msgs) >= max(acks) + 1, f"queue {p}: {len(msgs)} messages, acked up to {max(acks)}"
        for qoff, (seq, phys, dig) in acks.items():
            m = msgs[qoff]
            assert m.commit_log_offset == phys
            assert digest(m.body) == dig
            assert m.body == body(p, seq)
            assert m.properties["KEYS"] == f"p{p}s{seq}"
        # unacknowledged survivors, if any, are whole messages of the same producer stream
        for qoff in range(max(acks) + 1, len(msgs)):
            assert msgs[qoff].body == body(p, qoff)
    return maxes


async def test_sigkill_sync_flush_keeps_every_ack(tmp_path: Path) -> None:
    root = tmp_path / "store"
    acked = _run_and_kill(root, acks_wanted=600)
    assert len(acked) >= 600
    assert (root / "abort").exists()  # it really died without closing

    store = MessageStore.open(_cfg(root))
    try:
        assert not store.last_exit_ok
        maxes = _verify(store, acked)
        end = store.get_commit_log_max_offset()
        assert end > 64 * 1024  # several segments were rolled
    finally:
        await store.close()

    # a torn tail on purpose: garbage after the last record in the last segment, then a crash (abort marker)
    seg = end - end % (64 * 1024)
    path = root / "commitlog" / f"{seg:020d}"
    room = 64 * 1024 - (end - seg)
    garbage = (b"\xda\xa3\x20\xa7" * 64 + os.urandom(500))[: max(8, min(700, room))]
    if room < 8:
        pytest.skip("the last segment is exactly full")
    with open(path, "r+b") as f:
        f.seek(end - seg)
        f.write(garbage)
    (root / "abort").write_bytes(b"")
    store = MessageStore.open(_cfg(root))
    try:
        assert store.get_commit_log_max_offset() == end
        assert store.select_one_message_by_offset(end) is None
        assert _verify(store, acked) == maxes
        for p in maxes:
            r = store.get_message_sync(GetRequest("g", TOPIC, p, maxes[p], 32))
            assert r.status is GetMessageStatus.OFFSET_OVERFLOW_ONE
        # the store keeps working: a SYNC_FLUSH put after recovery lands right at the end and survives
        await store.start()
        res = await store.put_message(PutRequest(TOPIC, 0, 0, 0, 0, ("127.0.0.1", 1), b"after", {}))
        assert res.ok and res.items[0].wrote_offset in (end, seg + 64 * 1024) and res.items[0].queue_offset == maxes[0]
    finally:
        await store.close()
    store = MessageStore.open(_cfg(root))
    try:
        assert store.last_exit_ok
        assert [m.body for m in get_all(store, TOPIC, 0)][-1] == b"after"
    finally:
        await store.close()
