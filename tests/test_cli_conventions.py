"""CLI conventions: --version, shell completion, and a Git LFS pointer named as what it is."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from typer.testing import CliRunner

from prfaas_plan.cli import app
from tests.conftest import ROOT

runner = CliRunner()
POINTER = ("version https://git-lfs.github.com/spec/v1\n"
           "oid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\nsize 123456789\n")


def test_version_is_the_projects():
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    r = runner.invoke(app, ["--version"])
    assert r.exit_code == 0 and r.stdout == f"prfaas-plan {version}\n"


def test_bash_completion_completes_commands_and_options():
    script = [str(Path(sys.executable).parent / "prfaas-plan")]  # the console script: completion keys on its name

    def complete(words: str, cword: int) -> list[str]:
        env = {**os.environ, "_PRFAAS_PLAN_COMPLETE": "complete_bash", "COMP_WORDS": words, "COMP_CWORD": str(cword)}
        out = subprocess.run(script, env=env, capture_output=True, text=True, check=False)
        return out.stdout.split()

    assert complete("prfaas-plan opt", 1) == ["optimize"]
    assert "--format" in complete("prfaas-plan optimize --for", 2)
    shown = runner.invoke(app, ["--show-completion", "bash"])
    assert shown.exit_code == 0 and "_prfaas_plan_completion" in shown.stdout


@pytest.mark.parametrize(("args", "name"), [
    (["trace", "stats", "{}"], "t.jsonl"), (["simulate", "--trace", "{}", "--requests", "10"], "t.csv"),
    (["kv-rate", "{}"], "config.json"), (["optimize", "{}"], "scenario.yaml")])
def test_a_git_lfs_pointer_is_named_with_the_fix(tmp_path, args, name):
    path = tmp_path / name
    path.write_text(POINTER)
    r = runner.invoke(app, [a.format(path) for a in args])
    assert r.exit_code == 2
    assert r.stderr == (f"error: {path}: a Git LFS pointer of a 123,456,789-byte file, not the file itself: run `git "
                        "lfs pull` in its repository (or download the file from the repository's web page) and give "
                        "that file\n")
