"""Expected outcomes that end a command without a traceback."""

from __future__ import annotations


class PrfaasError(Exception):
    """Base of every error a user can cause or a plan can end in."""

    exit_code = 2


class SpecError(PrfaasError):
    """Bad input: a file, a field or a value. Exit code 2."""

    def __init__(self, message: str, *, source: str | None = None, field: str | None = None):
        where = ": ".join(p for p in (source, field) if p)
        super().__init__(f"{where}: {message}" if where else message)
        self.source = source
        self.field = field


class InfeasibleError(PrfaasError):
    """No configuration meets the constraints; says which one binds. Exit code 1."""

    exit_code = 1

    def __init__(self, message: str, *, binding: str | None = None):
        super().__init__(message)
        self.binding = binding


class SolverError(PrfaasError):
    """A fit or a root finder did not converge. Exit code 1."""

    exit_code = 1
