from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest
import typer.main
import typer.testing

# validated-spec cache (io/cache.py) in a fresh folder, so tests never read a user's cache
os.environ["PRFAAS_PLAN_CACHE"] = tempfile.mkdtemp(prefix="prfaas-plan-cache-")


def _command_built_once() -> None:
    """Typer builds an app's click command from its commands' signatures (``get_type_hints`` over
    each of them, about 0.1 s) at every call of the app and every ``CliRunner.invoke``. The console
    script does that once a process; the tests run the app in-process thousands of times, and the
    builds were a third to a half of the fuzz suite's time. The command depends on the app's
    registered commands alone, so it is built once per app and set of commands; every run still
    parses its arguments afresh and runs the same code."""
    build = typer.main.get_command
    built: dict[tuple, tuple] = {}

    def get_command(app: typer.Typer):
        key = (id(app), len(app.registered_commands), len(app.registered_groups), id(app.registered_callback))
        if key not in built:
            built[key] = (app, build(app))  # the app kept alive: its id is not reused
        return built[key][1]

    typer.main.get_command = get_command  # Typer.__call__ (the console script's main())
    typer.testing._get_command = get_command  # CliRunner.invoke


_command_built_once()

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).resolve().parent / "fixtures"
FUZZ = Path(__file__).resolve().parent / "fuzz"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test under tests/fuzz is in the ``fuzz`` tier (pyproject.toml's markers)."""
    for item in items:
        if FUZZ in item.path.parents:
            item.add_marker(pytest.mark.fuzz)


@pytest.fixture
def shared_data() -> Path:
    """The copies of ../shared/data the tests use (same layout: hf-configs/, traces/)."""
    return FIXTURES
