"""ACL 1.0 (RocketMQ 4.9 "plain ACL"): the request signature (``signature``), the pure rules engine
(``rules``) and the ``plain_acl.yml`` files (``files``). The request hook that runs the check before dispatch and the
file watcher live in ``protocol.remoting.acl_hook``."""
