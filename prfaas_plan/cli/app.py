"""The typer application and its error handling: a user's mistake is one line and exit code 2
(an infeasible plan exit 1); the commands register on ``app`` in their own modules."""

from __future__ import annotations

import warnings

import typer
from typer.core import TyperGroup

from prfaas_plan.errors import PrfaasError, SpecError

# an unknown catalog name that reached here unplaced came from the command's argument or option
_PLACES = {"models": ("model", "MODEL"), "hardware": ("hardware", "--hardware"), "scenarios": ("scenario", "SCENARIO")}


def _placed(exc: PrfaasError, command: object) -> PrfaasError:
    if not isinstance(exc, SpecError) or exc.source is not None or exc.field is not None:
        return exc
    name, label = _PLACES.get(exc.unknown or "", (None, None))
    if name is not None and any(p.name == name for p in getattr(command, "params", ())):
        return exc.at(field=label)
    return exc


def one_line(text: str) -> str:
    """An error as one line: a control character of a user's value (a path with a carriage return)
    shown escaped, not breaking the line."""
    return "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in text)


def _warnings(caught: list[warnings.WarningMessage]) -> None:
    """Each distinct warning a command raised as one line, never Python's file:line and source echo."""
    for text in dict.fromkeys(str(w.message).strip().splitlines()[0] for w in caught if str(w.message).strip()):
        typer.echo(f"warning: {one_line(text)}", err=True)


class WarningsGroup(TyperGroup):
    def invoke(self, ctx: typer.Context):  # type: ignore[override]
        with warnings.catch_warnings(record=True) as caught:  # the filters as they are, only shown as lines
            out = self._invoke(ctx)  # an error is its one line alone: the warnings before it are not shown
        _warnings(caught)
        return out

    def _invoke(self, ctx: typer.Context):  # type: ignore[no-untyped-def]
        from prfaas_plan.api.context import planning

        try:
            with planning():  # one planning context per command: each plan and service law built once
                return super().invoke(ctx)
        except PrfaasError as exc:
            exc = _placed(exc, self.commands.get(ctx.invoked_subcommand or ""))
            typer.echo(f"error: {one_line(str(exc))}", err=True)
            raise typer.Exit(exc.exit_code) from None
        except MemoryError:  # inputs within every bound can still ask for more than the machine holds
            typer.echo("error: out of memory: the inputs ask for more than this machine holds (fewer instances, "
                       "thresholds or requests)", err=True)
            raise typer.Exit(1) from None

    def list_commands(self, ctx: typer.Context) -> list[str]:  # keep the order commands are declared
        return list(self.commands)


app = typer.Typer(
    cls=WarningsGroup,
    name="prfaas-plan",
    help="Capacity planner for prefill/decode disaggregation across datacenters (PrfaaS).",
    no_args_is_help=True,
    add_completion=True,  # typer's --install-completion / --show-completion (bash, zsh, fish, PowerShell)
    pretty_exceptions_show_locals=False,
    rich_markup_mode=None,
)


def _version(value: bool) -> None:
    if value:
        from importlib.metadata import PackageNotFoundError, version

        try:
            typer.echo(f"prfaas-plan {version('prfaas-plan')}")
        except PackageNotFoundError:  # run from a source tree that was never installed
            typer.echo("prfaas-plan (not installed: no version recorded)")
        raise typer.Exit(0)


@app.callback()
def _root(version: bool = typer.Option(False, "--version", help="Print the version and exit.", is_eager=True,
                                         callback=_version)) -> None:
    """Capacity planner for prefill/decode disaggregation across datacenters (PrfaaS)."""
