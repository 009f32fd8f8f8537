"""Options shared by every command, declared once."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer


class Format(StrEnum):
    table = "table"
    json = "json"
    csv = "csv"


FormatOpt = Annotated[
    Format,
    typer.Option("--format", "-f", case_sensitive=False, help="table (people), json (complete, stable), csv"),
]
CatalogOpt = Annotated[
    list[Path] | None,
    typer.Option("--catalog", help="Extra catalog folder (models/, hardware/, scenarios/); repeatable. "
                 "Also read from $PRFAAS_PLAN_CATALOG."),
]


def catalog_from(paths: list[Path] | None):
    from prfaas_plan.io.load import Catalog

    return Catalog.default(paths or ())
