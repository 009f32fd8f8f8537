"""One planning context per command: what a scenario's plan is built from, computed once.

A command asks for the same service laws many times: `optimize` with a TTFT SLO times the
fleet for the throughput search, the homogeneous baseline of each method, the SLO search and the
systems it compares; a topology times each site for the joint search and again for latency. The
scenario specs are frozen and every step is a pure function of them, so within one command a
result is a function of the spec object it was asked for. ``planning()`` opens the context (every
CLI command runs in one, ``cli.app``); ``remembered`` returns the value built for the same spec
objects and arguments, or builds and keeps it. Outside a context nothing is kept.

Keys are the objects' identities, and the context holds the objects themselves, so an identity is
never reused while the context lives; a study opens a fresh context per point
(``planning(fresh=True)``) so that its memory stays one point's.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, TypeVar

T = TypeVar("T")


class Context:
    """The values built in one planning context, by (kind, the specs' identities, arguments)."""

    __slots__ = ("built", "held", "values")

    def __init__(self) -> None:
        self.values: dict[tuple[Hashable, ...], Any] = {}
        self.held: list[tuple[Any, ...]] = []  # the specs the keys' identities belong to
        self.built: dict[str, int] = {}  # builds per kind, for the tests' call counts


_CURRENT: ContextVar[Context | None] = ContextVar("prfaas_plan_planning", default=None)


@contextmanager
def planning(*, fresh: bool = False) -> Iterator[Context]:
    """The command's planning context: the one open already, or a new one (always with ``fresh``)."""
    open_ = _CURRENT.get()
    if open_ is not None and not fresh:
        yield open_
        return
    ctx = Context()
    token = _CURRENT.set(ctx)
    try:
        yield ctx
    finally:
        _CURRENT.reset(token)


def current() -> Context | None:
    return _CURRENT.get()


def known(kind: str, specs: tuple[Any, ...], args: tuple[Hashable, ...]) -> Any:
    """The value built for (kind, ``specs``, ``args``) in the open context; None if none was."""
    ctx = _CURRENT.get()
    return None if ctx is None else ctx.values.get((kind, *(id(s) for s in specs), *args))


def remembered(kind: str, specs: tuple[Any, ...], args: tuple[Hashable, ...], build: Callable[[], T]) -> T:
    """``build()`` once per (kind, ``specs`` by identity, ``args``) in the open context; every call
    outside one."""
    ctx = _CURRENT.get()
    if ctx is None:
        return build()
    key = (kind, *(id(s) for s in specs), *args)
    if key in ctx.values:
        return ctx.values[key]
    value = build()
    ctx.values[key] = value
    ctx.held.append(specs)
    ctx.built[kind] = ctx.built.get(kind, 0) + 1
    return value
