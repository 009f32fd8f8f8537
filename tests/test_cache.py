"""The validated-spec cache: same answer as validation, never stale, optional."""

import os
import shutil
import time

import pytest
from typer.testing import CliRunner

from prfaas_plan.cli import app
from prfaas_plan.io.load import PACKAGED_CATALOG, load_gpu, load_model


def test_cached_equals_validated(tmp_path, monkeypatch):
    monkeypatch.setenv("PRFAAS_PLAN_CACHE", str(tmp_path / "cache"))
    first = load_model("internal-1t")
    assert len(list((tmp_path / "cache").iterdir())) == 1
    assert load_model("internal-1t") == first
    monkeypatch.setenv("PRFAAS_PLAN_CACHE", "off")
    assert load_model("internal-1t") == first
    assert load_gpu("H200") == load_gpu("H200")


def test_an_edited_file_is_read_again(tmp_path, monkeypatch):
    monkeypatch.setenv("PRFAAS_PLAN_CACHE", str(tmp_path / "cache"))
    f = tmp_path / "m.yaml"
    shutil.copy(PACKAGED_CATALOG / "models" / "Llama-3.1-8B.yaml", f)
    assert load_model(str(f)).vocab_size == 128256
    text = f.read_text().replace("vocab_size: 128256", "vocab_size: 1000")
    time.sleep(0.01)
    f.write_text(text)
    os.utime(f, ns=(time.time_ns(), time.time_ns() + 1_000_000))
    assert load_model(str(f)).vocab_size == 1000


@pytest.mark.parametrize("make", ["file", "under-a-file"])
def test_an_unusable_cache_named_in_the_environment_is_an_error(tmp_path, monkeypatch, make):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    folder = blocker if make == "file" else blocker / "sub"
    monkeypatch.setenv("PRFAAS_PLAN_CACHE", str(folder))
    res = CliRunner().invoke(app, ["models"])
    assert res.exit_code == 2 and res.stdout == ""
    reason = ("is a file, not a folder" if make == "file"
              else "cannot make the folder: a part of the path is not a folder")
    assert res.stderr == (f"error: $PRFAAS_PLAN_CACHE {folder}: {reason} "
                          "(set PRFAAS_PLAN_CACHE=off to run without a cache)\n")


def test_an_unusable_default_cache_is_no_cache(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    monkeypatch.delenv("PRFAAS_PLAN_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))  # the default folder cannot be made
    assert load_model("internal-1t").name == "internal-1t"
    assert blocker.read_text() == "x"


@pytest.mark.parametrize("value", ["off", "OFF", " Off "])
def test_off_in_any_case_turns_the_cache_off(tmp_path, monkeypatch, value):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PRFAAS_PLAN_CACHE", value)
    assert load_model("internal-1t").name == "internal-1t"
    assert list(tmp_path.iterdir()) == []  # no folder named "OFF" made
