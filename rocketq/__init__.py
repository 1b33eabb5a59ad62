"""rocketq's public import name: the client SDK as ``rocketq``, the admin client as ``rocketq.admin``, the blocking
facades as ``rocketq.sync`` and the Spark data source as ``rocketq.spark``. They are the very objects of the
``client``, ``client.admin``, ``client.sync`` and ``spark_connector`` packages (``rocketq.Producer is
client.Producer``), found even when a project has its own ``client.py`` (``rocketq._packages``)::

    from rocketq import ConsumeResult, Message, Producer, PushConsumer

    async with Producer("group", namesrv_addr="127.0.0.1:9876") as p:
        await p.send(Message("Topic", b"body", tags="A"))
"""

from __future__ import annotations

from rocketq import _packages  # noqa: F401  (first: claims the top-level package names, see its docstring)

# isort: split
import client as _client
from client import *  # noqa: F403  (every name of client.__all__)
from client.consumer.options import PullConsumerOptions, PushConsumerOptions
from client.producer.options import ProducerOptions

__all__ = ["ProducerOptions", "PullConsumerOptions", "PushConsumerOptions"]
__all__ += _client.__all__
