"""The one progress bar of the CLI (the library API only calls a callback)."""

from __future__ import annotations

from typing import Any


class Bar:
    """Rich progress bars on stderr when it is a terminal, silent otherwise.

    Used as ``with Bar() as tick:``; ``tick(task, done, total)`` (None when silent) is the
    progress callback the library API takes.
    """

    def __init__(self) -> None:
        import sys

        self.enabled = sys.stderr.isatty()
        self._bar: Any = None
        self._tasks: dict[str, Any] = {}

    def __enter__(self):
        if not self.enabled:
            return None
        from rich.console import Console
        from rich.progress import Progress

        self._bar = Progress(console=Console(stderr=True), transient=True)
        self._bar.start()
        return self._tick

    def _tick(self, name: str, arrived: int, expected: int) -> None:
        if name not in self._tasks:
            self._tasks[name] = self._bar.add_task(name, total=expected)
        self._bar.update(self._tasks[name], completed=min(arrived, expected))

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.stop()
