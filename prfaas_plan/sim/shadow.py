"""Cython's pure-Python-mode names as no-ops, for ``sim.kernel`` run as Python where Cython is not
installed at run time (it is a build requirement only; the idea of Cython's own ``Shadow`` module,
as fontTools' ``misc/cython.py``). Only the names the kernel uses.

``cclass`` also gives the class ``__slots__``: the attributes declared with ``declare`` in its body
(each a ``FIELD`` marker here), so the Python record is as slotted as the compiled one.
"""

from __future__ import annotations

from typing import Any

compiled = False
double = int = bint = Py_ssize_t = None  # types: only read by Cython
FIELD = object()  # what ``declare`` gives in a class body: a slot to make


def declare(*_: Any, **__: Any) -> object:
    return FIELD


def cclass(cls: type) -> type:
    """The class again, with a slot for each ``declare``d attribute instead of a class attribute."""
    fields = tuple(k for k, v in vars(cls).items() if v is FIELD)
    if not fields:
        return cls
    body = {k: v for k, v in vars(cls).items() if v is not FIELD and k not in ("__dict__", "__weakref__")}
    return type(cls.__name__, cls.__bases__, {**body, "__slots__": fields})


def _same(f: Any) -> Any:
    return f


cfunc = ccall = final = inline = no_gc = _same


def freelist(_: int) -> Any:
    return _same


def boundscheck(_: bool) -> Any:
    return _same


wraparound = cdivision = boundscheck


def cast(_: Any, value: Any) -> Any:
    return value
