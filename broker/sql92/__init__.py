"""SQL92 message selectors (RocketMQ's ``MessageSelector.bySql``): ``compiler`` parses and compiles, ``values`` holds
J's value semantics."""

from broker.sql92.compiler import Selector, SelectorError, compile_selector, parse_selector

__all__ = ["Selector", "SelectorError", "compile_selector", "parse_selector"]
