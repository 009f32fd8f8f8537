"""The typer app. Commands are thin: load inputs, one ``api`` call, render.

Errors a user can cause (``PrfaasError``) end as one line on stderr and exit code 2 (bad input)
or 1 (infeasible plan, failed fit); never a traceback.
"""

from __future__ import annotations

import sys

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


class _Group(TyperGroup):
    def invoke(self, ctx: typer.Context):  # type: ignore[override]
        try:
            return super().invoke(ctx)
        except PrfaasError as exc:
            exc = _placed(exc, self.commands.get(ctx.invoked_subcommand or ""))
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(exc.exit_code) from None
        except MemoryError:  # inputs within every bound can still ask for more than the machine holds
            typer.echo("error: out of memory: the inputs ask for more than this machine holds (fewer instances, "
                       "thresholds or requests)", err=True)
            raise typer.Exit(1) from None

    def list_commands(self, ctx: typer.Context) -> list[str]:  # keep the order commands are declared
        return list(self.commands)


app = typer.Typer(
    cls=_Group,
    name="prfaas-plan",
    help="Capacity planner for prefill/decode disaggregation across datacenters (PrfaaS).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_show_locals=False,
    rich_markup_mode=None,
)

from prfaas_plan.cli import catalog, kv, latency, perf, plan, sim  # noqa: E402, F401  (register commands)


def _is(exc: BaseException, name: str) -> bool:
    return any(cls.__name__ == name for cls in type(exc).__mro__)


def main() -> None:
    """The console script: click's usage errors also end as one line (and exit code 2)."""
    try:
        code = app(standalone_mode=False)
    except Exception as exc:
        if _is(exc, "NoArgsIsHelpError"):  # `prfaas-plan` alone: the help, not an error
            typer.echo(exc.ctx.get_help())  # type: ignore[attr-defined]
            sys.exit(0)
        if _is(exc, "UsageError"):
            ctx = getattr(exc, "ctx", None)
            hint = f" (see `{ctx.command_path} --help`)" if ctx is not None else ""
            typer.echo(f"error: {exc.format_message()}{hint}", err=True)  # type: ignore[attr-defined]
            sys.exit(2)
        if _is(exc, "Abort"):
            typer.echo("aborted", err=True)
            sys.exit(1)
        raise
    sys.exit(code if isinstance(code, int) else 0)
