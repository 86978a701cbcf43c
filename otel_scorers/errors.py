"""Errors the project raises to its users."""

from __future__ import annotations

from collections.abc import Sequence


class ConfigError(ValueError):
    """Invalid configuration. `path` names the bad key, e.g. `scorers[1].filter.left.path`.

    A file with several mistakes raises one `ConfigError` holding all of them in `errors`, so
    that they can be fixed in one go; `path` and `message` are then those of the first.
    """

    def __init__(
        self, path: str, message: str, *, errors: Sequence[ConfigError] = (), source: str | None = None
    ) -> None:
        self.path = path
        self.message = message
        self.source = source  # the file, when the configuration came from one
        self.errors: tuple[ConfigError, ...] = tuple(errors) or (self,)
        if len(self.errors) > 1:
            text = f"{len(self.errors)} errors:\n" + "\n".join(f"  {error.line}" for error in self.errors)
        else:
            text = self.line
        super().__init__(f"{source}: {text}" if source else text)

    @property
    def line(self) -> str:
        return f"{self.path}: {self.message}" if self.path else self.message

    def in_file(self, source: str) -> ConfigError:
        """The same error(s), saying which file they are in."""
        if len(self.errors) == 1:
            return ConfigError(self.path, self.message, source=source)
        return ConfigError(self.path, self.message, errors=self.errors, source=source)

    @classmethod
    def combine(cls, errors: Sequence[ConfigError]) -> ConfigError:
        """One error for all of `errors` (each flattened), in the order they were found."""
        flat = [single for error in errors for single in error.errors]
        if len(flat) == 1:
            return flat[0]
        return cls(flat[0].path, flat[0].message, errors=flat)


class ListenError(OSError):
    """A receiver could not listen on its address (the port is in use, say); the message names it."""
