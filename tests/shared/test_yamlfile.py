"""shared/yamlfile.py: libyaml's parser gives the project's YAML files exactly the data PyYAML's
pure-Python safe loader gives, and reports bad YAML with its position as before."""
from __future__ import annotations

import pytest
import yaml

from shared import yamlfile
from tests.helpers.paths import ROOT

FILES = sorted(p for p in ROOT.rglob("*.yml")
               if not {".venv", ".git", "node_modules"} & set(p.relative_to(ROOT).parts))


def test_the_project_has_yaml_files_to_compare():
    names = {p.name for p in FILES}
    assert {"course.yml", "mistakes.yml"} <= names and len(FILES) >= 5


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_yaml_file_reads_as_the_python_safe_loader_reads_it(path):
    text = path.read_text(encoding="utf-8")
    assert yamlfile.safe_load(text) == yaml.load(text, Loader=yaml.SafeLoader)


def test_bad_yaml_still_says_where():
    with pytest.raises(yaml.YAMLError) as err:
        yamlfile.safe_load("a: 1\nb: [2, 3\nc: 4\n")
    assert err.value.problem_mark is not None and err.value.problem_mark.line >= 1


def test_nothing_beyond_plain_data_is_built():
    with pytest.raises(yaml.YAMLError):
        yamlfile.safe_load("!!python/object/apply:os.system ['true']\n")
