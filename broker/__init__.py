"""The broker: handlers, services and the message store (``broker.store``); ``broker.app.BrokerApp`` wires them."""
