"""Helpers of the README-number tests: the README's text (spaces normalised), a command's JSON
run from the project folder (cached: several tests read one output), and the formats the README
writes numbers in."""

from __future__ import annotations

import functools
import json

from typer.testing import CliRunner

from prfaas_plan import units
from prfaas_plan.cli import app
from tests.conftest import ROOT

README = " ".join((ROOT / "README.md").read_text().split())  # prose wraps: compare with single spaces


def quoted(*texts: str) -> None:
    """Each text is in the README (spaces normalised)."""
    missing = [t for t in texts if " ".join(t.split()) not in README]
    assert missing == []


@functools.cache
def run(*args: str) -> dict:
    """``prfaas-plan ARGS --format json`` run from the project folder (the README's paths)."""
    import os

    here = os.getcwd()
    os.chdir(ROOT)
    try:
        res = CliRunner().invoke(app, [*args, "--format", "json"])
    finally:
        os.chdir(here)
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def tok(x: float) -> str:
    """A length as the tables write it: "44,821 (43.8K)"."""
    return f"{x:,.0f} ({x / units.K_TOKENS:.1f}K)"


def t_of(x: float) -> str:
    return units.format_threshold(x)


def pct(x: float, digits: int = 1) -> str:
    return f"{x * 100:.{digits}f}%"


def signed(x: float) -> str:
    return f"{x * 100:+.1f}%"
