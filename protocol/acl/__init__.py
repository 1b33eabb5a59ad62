"""ACL 1.0 (RocketMQ 4.9 "plain ACL") on the wire: the request signature (``signature``). The rules engine, the
``plain_acl.yml`` files and the request hook are the servers' runtime and live in ``runtime.acl``."""
