"""rocketq's RocketMQ 5.x controller (RIP-44 controller mode): per broker group it keeps the replicas, the master,
MasterEpoch and SyncStateSet, elects a new master when the old one goes silent, and serves J 5.5.0's controller
request codes — standalone (``mqcontroller``) or inside a name server (``enableControllerInNamesrv=true``).
Several controllers agree through PySyncObj's Raft log (``controller.raft_log``); one controller needs no Raft.

| module     | owns                                                                             |
|------------|----------------------------------------------------------------------------------|
| state      | the pure state machine: decisions and replicated events (J ReplicasInfoManager)  |
| elect      | the election policy (J DefaultElectPolicy)                                       |
| heartbeat  | which brokers are live (J DefaultBrokerHeartbeatManager)                         |
| local_log  | single-controller event log (JSON state file) and the EventLog protocol          |
| raft_log   | the PySyncObj Raft event log                                                     |
| service    | leader gating, one decision at a time, liveness scans, elections, notifications  |
| handlers   | the request codes                                                                |
| config     | ControllerConfig and J's key names                                               |
| metrics    | Prometheus collector                                                             |
| app        | composition root, where the controller listens                                   |
| __main__   | ``mqcontroller``                                                                 |
"""
