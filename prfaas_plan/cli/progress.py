"""The one progress bar of the CLI (the library API only calls a callback)."""

from __future__ import annotations

from typing import Any


class Bar:
    """Rich progress bars on stderr when it is a terminal, silent otherwise.

    Used as ``with Bar() as tick:``; ``tick(task, done, total)`` (None when silent) is the
    progress callback the library API takes.
    """

    def __init__(self, *, rate: str | None = None) -> None:
        import sys

        self.enabled = sys.stderr.isatty()
        self.rate = rate  # with a unit ("points"): the count done, the rate and the time left as well
        self._bar: Any = None
        self._tasks: dict[str, Any] = {}

    def __enter__(self):
        if not self.enabled:
            return None
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

        columns = () if self.rate is None else (
            TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[rate]}"),
            TimeRemainingColumn())
        self._bar = Progress(*columns, console=Console(stderr=True), transient=True)
        self._bar.start()
        return self._tick

    def _tick(self, name: str, arrived: int, expected: int) -> None:
        if name not in self._tasks:
            self._tasks[name] = self._bar.add_task(name, total=expected, rate="")
        task = self._tasks[name]
        speed = next(t.speed for t in self._bar.tasks if t.id == task) if self.rate is not None else None
        self._bar.update(task, completed=min(arrived, expected),
                         rate=f"{speed:,.1f} {self.rate}/s" if speed else "")

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.stop()
