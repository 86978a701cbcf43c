"""Errors the project raises to its users."""

from __future__ import annotations


class ConfigError(ValueError):
    """Invalid configuration. `path` names the bad key, e.g. `scorers[1].filter.left.path`."""

    def __init__(self, path: str, message: str) -> None:
        self.path = path
        self.message = message
        super().__init__(f"{path}: {message}" if path else message)
