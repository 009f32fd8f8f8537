"""Fuzzing `import-deployment` with mutated deployment files (a generated llm-d, SGLang or Dynamo
folder with one value replaced, at any key path, inside an embedded plan block or EPP configuration
too) through the console script: exit 0, or one line naming the file or option, never a traceback
(``harness.check``)."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import yaml
from hypothesis import given
from hypothesis import strategies as st

from tests.fuzz.harness import check, run
from tests.fuzz.test_fuzz_cli import fuzz

_VALUES = st.one_of(st.none(), st.booleans(), st.integers(-10, 10**7), st.floats(allow_nan=True),
                    st.text(max_size=8), st.lists(st.integers(), max_size=2),
                    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2))
_FOLDERS: dict[str, Path] = {}


def _generated(target: str) -> Path:
    if target not in _FOLDERS:
        out = Path(tempfile.mkdtemp(prefix="prfaas-fuzz-deploy-")) / target
        assert run(["deploy", "--target", target, "-o", str(out)]).code == 0
        _FOLDERS[target] = out
    return _FOLDERS[target]


def _paths(node, at=()):
    if isinstance(node, dict):
        for k, v in node.items():
            yield (*at, k)
            yield from _paths(v, (*at, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield (*at, i)
            yield from _paths(v, (*at, i))


def _embedded(text):
    """The document a string value holds (a JSON plan block, an EPP configuration), with its writer; or None."""
    if not isinstance(text, str) or not (text.startswith("{") or "\n" in text):
        return None
    doc = json.loads(text) if text.startswith("{") else yaml.safe_load(text)
    return (doc, json.dumps if text.startswith("{") else yaml.safe_dump) if isinstance(doc, dict) else None


def _mutate(data, doc, value) -> None:
    """One value of ``doc`` replaced by ``value``, at any key path, inside an embedded document too."""
    where = data.draw(st.sampled_from(list(_paths(doc))))
    node = doc
    for k in where[:-1]:
        node = node[k]
    inner = _embedded(node[where[-1]])
    if inner is not None and data.draw(st.booleans()):
        _mutate(data, inner[0], value)
        node[where[-1]] = inner[1](inner[0])
    else:
        node[where[-1]] = value


@fuzz(40)
@given(st.data(), st.sampled_from(["llm-d", "sglang", "dynamo"]), _VALUES)
def test_import_deployment_of_mutated_files(data, target, value):
    src = _generated(target)
    folder = Path(tempfile.mkdtemp(prefix="prfaas-fuzz-deploy-"))
    files = sorted(p for p in src.glob("*.yaml"))
    path = data.draw(st.sampled_from(files))
    docs = list(yaml.safe_load_all(path.read_text()))
    _mutate(data, docs[data.draw(st.integers(0, len(docs) - 1))], value)
    for p in files:
        (folder / p.name).write_text(p.read_text() if p != path else yaml.safe_dump_all(docs))
    # a scenario named "nan" is imported as "nan-deployed": the output repeats the input's name
    check(run(["import-deployment", str(folder), "--format", "json"]), names=(str(folder), "--scenario"),
          echoed=(f"{value}-deployed",) if isinstance(value, str) else ())
