"""Expected outcomes that end a command without a traceback."""

from __future__ import annotations

from typing import Any


class PrfaasError(Exception):
    """Base of every error a user can cause or a plan can end in."""

    exit_code = 2


class SpecError(PrfaasError):
    """Bad input: a file or option (``source``), a field and a value. Exit code 2.

    Printed as ``source: field: message``; the message shows the value. ``unknown`` is the catalog
    kind ("models", "hardware", "scenarios") when a name was not found, so a caller that knows where
    the name came from (a scenario field, an option) can say so with ``at``.
    """

    def __init__(self, message: str, *, source: str | None = None, field: str | None = None,
                 unknown: str | None = None):
        where = ": ".join(p for p in (source, field) if p)
        super().__init__(f"{where}: {message}" if where else message)
        self.message = message
        self.source = source
        self.field = field
        self.unknown = unknown

    def at(self, *, source: str | None = None, field: str | None = None) -> SpecError:
        """The same error placed at ``source`` / ``field``."""
        return SpecError(self.message, source=source, field=field, unknown=self.unknown)


class InfeasibleError(PrfaasError):
    """No configuration meets the constraints; says which one binds. Exit code 1."""

    exit_code = 1

    def __init__(self, message: str, *, binding: str | None = None):
        super().__init__(message)
        self.binding = binding


class SolverError(PrfaasError):
    """A fit or a root finder did not converge. Exit code 1."""

    exit_code = 1


_KINDS = {type(None): "null", bool: "true/false", int: "a number", float: "a number", str: "a string",
          list: "a list", dict: "a mapping"}


def kind_of(value: Any) -> str:
    """A value's kind in words, for messages (never a Python class name such as NoneType)."""
    return _KINDS.get(type(value), "a value of another kind")
