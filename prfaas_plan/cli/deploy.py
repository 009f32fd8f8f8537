"""`deploy` and `import-deployment`: the plan as a serving stack's files (llm-d, SGLang, vLLM, Dynamo),
and such files back into a scenario (``api.deploy``, ``api.deploy_import``)."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Annotated

import typer

from prfaas_plan.cli.app import app
from prfaas_plan.cli.options import (
    CatalogOpt,
    Format,
    FormatOpt,
    MethodOpt,
    ScenarioArg,
    SetOpt,
    catalog_from,
    output_check,
)

TargetOpt = Annotated[str, typer.Option("--target", "-t", help="llm-d, sglang, vllm or dynamo")]
DirOpt = Annotated[Path, typer.Option("--output", "-o", help="Folder to write the files and their README.md into "
                                      "(created; its parent must exist)")]


def out_dir(path: Path, option: str = "--output") -> Path:
    """A folder to write into: created when missing (its parent must exist), never a file."""
    from prfaas_plan.errors import SpecError

    if path.exists() and not path.is_dir():
        raise SpecError("is a file, not a folder", field=f"{option} {path}")
    if not path.exists():
        output_check(option)(path)  # the parent exists and is writable
        path.mkdir()
    return path


def _command(scenario: str | None, target: str, output: Path, set_: list[str] | None, method: str | None) -> str:
    args = ["prfaas-plan", "deploy", *([scenario] if scenario else []), "--target", target, "-o", str(output)]
    for item in set_ or []:
        args += ["--set", item]
    return shlex.join(args + (["--method", method] if method else []))


@app.command("deploy")
def deploy(
    scenario: ScenarioArg = None,
    target: TargetOpt = "llm-d",
    output: DirOpt = Path("deployment"),
    set_: SetOpt = None,
    method: MethodOpt = None,
    catalog: CatalogOpt = None,
) -> None:
    """The plan optimize chooses (or a plan `size -o` wrote) as a serving stack's files, with a README.md
    saying what each is, which numbers came from the plan and what the target cannot express.

    Example: prfaas-plan deploy two-regions --target llm-d -o two-regions-llm-d
    """
    from prfaas_plan.api.deploy import check_target, deployment, generate
    from prfaas_plan.cli.options import method_choice, write_text
    from prfaas_plan.deploy.readme import readme
    from prfaas_plan.io.scenario import load_scenario, scenario_mapping

    check_target(target)
    cat = catalog_from(catalog)
    sc = load_scenario(scenario, cat, overrides=set_, method=method_choice(method))
    _, placed = scenario_mapping(scenario, cat, overrides=set_, method=method_choice(method))
    d = deployment(sc, command=_command(scenario, target, output, set_, method), scenario_data=placed.data)
    g = generate(d, target)
    folder = out_dir(output)
    for name, text in {**g.files, "README.md": readme(d, g)}.items():
        write_text(folder / name, text, "--output")
    for w in g.warnings:
        typer.echo(f"warning: {w} (see {folder / 'README.md'})", err=True)
    typer.echo(f"wrote {len(g.files) + 1} files to {folder} ({', '.join([*g.files, 'README.md'])})", err=True)


@app.command("import-deployment")
def import_deployment(
    folder: Annotated[Path, typer.Argument(help="A folder of deployment files (deploy's, or your own)")],
    base: Annotated[str | None, typer.Option("--scenario", help="Scenario giving what the files do not carry "
                                             "(model, link, workload): needed for files deploy did not write")] = None,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Write the scenario YAML here",
                                                callback=output_check("--output"))] = None,
    fmt: FormatOpt = Format.table,
    catalog: CatalogOpt = None,
) -> None:
    """Deployment files back into a scenario (fleet per role, GPUs, threshold), and how far the deployed
    configuration is from the best plan for that fleet.

    Example: prfaas-plan import-deployment two-regions-llm-d -o running.yaml && prfaas-plan optimize running.yaml
    """
    from prfaas_plan.api.deploy_import import import_deployment as run
    from prfaas_plan.report.views_deploy import emit_import

    result = run(folder, catalog_from(catalog), base=base, output=output)
    emit_import(fmt.value, result)
