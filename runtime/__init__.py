"""The daemon runtime the name server, the broker and the SDK share, beside the wire (``protocol``), never part of
it: how a process runs rather than what goes over the wire.

| module              | owns                                                                                  |
|---------------------|---------------------------------------------------------------------------------------|
| ``tasks``           | ``stop_tasks``: the one way every service stops its background tasks (stdlib only)     |
| ``logsetup``        | structlog configuration, per-logger levels, the rolling log files                      |
| ``daemon``          | uvloop, signals, the start / banner / wait / stop life of a daemon                     |
| ``exporter``        | the Prometheus HTTP exporter and readiness endpoint of both daemons                    |
| ``config_loader``   | broker.conf / namesrv.conf → frozen pydantic config through one key table per daemon   |
| ``java_config_keys``| every key RocketMQ 4.9.8 reads from its config files, with its kind                    |
| ``properties_file`` | reading and atomically rewriting a Java-properties config file                          |
| ``host``            | this host's address (the UDP-socket trick) and host-name lookup                         |
| ``msg_id``          | this process's unique message-id generator (address, pid, per-process counter)        |
| ``acl``             | the access-control engine: rules, files, ACL 2.0 users, the per-code table, the hook   |

Imports: ``protocol`` and third-party libraries; never ``broker``, ``namesrv``, ``client`` or ``spark_connector``.
"""
