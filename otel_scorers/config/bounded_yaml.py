"""YAML read within a count of values: anchors and aliases cannot make a small file a huge one.

PyYAML builds an alias as one more reference to the anchored value, so a 1 kB file of nine
anchors each listing the previous one ten times is read at once, but stands for 10⁹ values:
validating it walks every one of them (a minute and more, memory growing). A configuration
states its scorers and settings by hand: `MAX_VALUES` (100,000) is far beyond any, and an alias
that refers to the value holding it (a structure containing itself) is no configuration at all.
"""

from __future__ import annotations

from typing import Any

import yaml

MAX_VALUES = 100_000


class TooManyValues(ValueError):
    """The document its aliases expand is larger than `MAX_VALUES`, or contains itself."""


class _BoundedLoader(yaml.SafeLoader):
    def construct_document(self, node: yaml.Node) -> Any:
        expanded_size(node)
        return super().construct_document(node)


def safe_load(text: str) -> Any:
    """`yaml.safe_load` of `text`, refusing (`TooManyValues`) what would expand past `MAX_VALUES`."""
    return yaml.load(text, Loader=_BoundedLoader)


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def expanded_size(root: yaml.Node) -> int:
    """How many values the document rooted at `root` stands for once its aliases are expanded;
    counted once per distinct node (no recursion: nesting is bounded by the parser only)."""
    sizes: dict[int, int] = {}
    entered: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, leaving = stack.pop()
        if leaving:
            size = 1 + sum(sizes[id(child)] for child in _children(node))
            if size > MAX_VALUES:
                raise TooManyValues(f"its aliases expand to more than {MAX_VALUES:,} values")
            sizes[id(node)] = size
            continue
        if id(node) in sizes:
            continue
        if id(node) in entered:
            raise TooManyValues("an alias refers to a value that contains it")
        entered.add(id(node))
        stack.append((node, True))
        stack.extend((child, False) for child in _children(node) if id(child) not in sizes)
    return sizes[id(root)]
