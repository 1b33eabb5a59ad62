"""``controller.raft_log`` on its own: three PySyncObj logs in one process (real sockets on free ports, journals
under tmp_path). Events committed on the leader are applied on every member; after a forced snapshot (log
compaction) a member stopped and started again on its files loads its snapshot and catches up with the rest, and
started once more with every other member down it rebuilds the same state from its snapshot and journal alone."""

from __future__ import annotations

from pathlib import Path

from pysyncobj import pickle as pysyncobj_pickle

from controller.config import Peer, Peers
from controller.raft_log import RaftEventLog
from controller.state import ControllerState
from tests.eventually import eventually
from tests.servers import free_port


def _events(n: int) -> list[dict[str, object]]:
    out: list[dict[str, object]] = []
    for i in range(1, n + 1):
        out.append(
            {
                "type": "APPLY_BROKER_ID",
                "clusterName": "c",
                "brokerName": f"g{i}",
                "brokerAddress": f"127.0.0.1:{10000 + i}",
                "brokerId": 1,
                "registerCheckCode": f"127.0.0.1:{10000 + i};1",
            }
        )
        out.append({"type": "ELECT_MASTER", "brokerName": f"g{i}", "newMasterElected": True, "newMasterBrokerId": 1})
    return out


def _meta_commit(path: Path) -> int:
    with open(path, "rb") as f:
        return int(pysyncobj_pickle.loads(f.read()).get("raftCommitIndex", 0))


def _log(tmp_path: Path, peers: list[Peer], i: int) -> RaftEventLog:
    others = tuple(p for p in peers if p is not peers[i])
    return RaftEventLog(
        tmp_path / f"n{i}", ControllerState(), Peers("g", peers[i], others), election_timeout_ms=500, snapshot_s=3600
    )


async def test_committed_events_reach_every_member_and_survive_a_snapshot_and_restart(tmp_path: Path) -> None:
    peers = [Peer(f"n{i}", f"127.0.0.1:{free_port()}", f"127.0.0.1:{free_port()}") for i in range(3)]
    logs = [_log(tmp_path, peers, i) for i in range(3)]
    for log in logs:
        await log.start()
    try:
        leader = await eventually(lambda: next((lg for lg in logs if lg.is_leader), None), timeout=20, what="a leader")
        assert await leader.append(_events(20), 5.0)
        want = leader.state.to_json()
        assert len(want["syncStates"]) == 20
        await eventually(
            lambda: all(lg.state.to_json() == want for lg in logs), timeout=10, what="every member applied"
        )
        follower = next(lg for lg in logs if lg is not leader)
        assert follower.leader() == leader.leader()
        idx = logs.index(follower)
        assert follower._sync is not None
        follower._sync.forceLogCompaction()
        await eventually(lambda: (tmp_path / f"n{idx}" / "raft.dump").exists(), timeout=10, what="a snapshot")
        assert await leader.append(_events(25)[40:], 5.0)  # more after the snapshot: only in the journal
        want = leader.state.to_json()
        await eventually(lambda: follower.state.to_json() == want, timeout=10, what="the follower caught up")
        await follower.stop()
        # the member starts again on its own files while the others run on: it loads its snapshot (the 20 groups
        # before it), replays its journal and takes what it lacks from the leader
        again = _log(tmp_path, peers, idx)
        logs[idx] = again
        await again.start()
        await eventually(lambda: len(again.state.sync_states) >= 20, timeout=10, what="the snapshot loaded")
        await eventually(lambda: again.state.to_json() == want, timeout=20, what="the restarted member caught up")
        assert len(want["syncStates"]) == 25
        # and alone: once its commit index is on disk (PySyncObj writes it once a second), every member stopped,
        # it starts on its snapshot and journal with nobody to ask, and applies what it knew committed
        committed = int(again.status()["commit_idx"])
        meta = tmp_path / f"n{idx}" / "raft.journal.meta"
        await eventually(lambda: _meta_commit(meta) >= committed, timeout=10, what="the commit index on disk")
        for log in logs:
            await log.stop()
        alone = _log(tmp_path, peers, idx)
        logs[idx] = alone
        await alone.start()
        await eventually(lambda: alone.state.to_json() == want, timeout=10, what="the state from its own files")
    finally:
        for log in logs:
            await log.stop()
