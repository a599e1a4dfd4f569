"""YAML read strictly: no anchors or aliases, and a bound on nesting, checked while the document is composed.

A YAML alias bomb (`a: &a [x, x]`, `b: &b [*a, *a]`, ... ten levels) is a
few hundred bytes that safe_load expands into billions of nodes; nested
brackets ten thousand deep exhaust the stack.  Scripts and plans are lists
of steps or calls, so neither is ever needed: the loader here refuses them
at the first event, before anything is built.  Subclasses choose the
exception and its words (`belay run`'s plans say "plans may not ...").
"""

from __future__ import annotations

from typing import Any

import yaml

MAX_DEPTH = 32
"""Levels of nesting a script or plan may have."""


class DocumentError(ValueError):
    """A script file YAML cannot be read from safely (aliases, too deep), in one line."""


class StrictLoader(yaml.SafeLoader):
    """YAML's safe loader, refusing anchors, aliases and nesting past `MAX_DEPTH` as it composes."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0

    def refused_alias(self, line: int) -> Exception:
        return DocumentError(f"scripts may not use YAML aliases or anchors (*name, &name; line {line}): write "
                             "each value out where it is used")

    def too_deep(self, line: int) -> Exception:
        return DocumentError(f"the script nests more than {MAX_DEPTH} levels deep (line {line})")

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node | None:
        event = self.peek_event()
        line = event.start_mark.line + 1
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None) is not None:
            raise self.refused_alias(line)
        if self._depth >= MAX_DEPTH:
            raise self.too_deep(line)
        self._depth += 1
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


def load_yaml(text: str, loader: type[StrictLoader] = StrictLoader) -> Any:
    """The document in `text`, read with `loader` (errors: yaml.YAMLError, or the loader's own)."""
    return yaml.load(text, Loader=loader)  # noqa: S506 - a SafeLoader, made stricter
