"""docs/maintaining.md's map ("Where things live") matches the tree: every package of autograder/
has its row, and every module a row names is in that row's folders, so a reader who follows the
map finds the file."""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def rows() -> list[tuple[list[str], list[str]]]:
    """(folders, module names) of each row of the map; a folder written `exports/` after
    `autograder/similarity/` in one cell is `autograder/exports/`."""
    text = (ROOT / "docs" / "maintaining.md").read_text(encoding="utf-8")
    section = text.split("## Where things live", 1)[1].split("\n## ", 1)[0]
    found = []
    for line in section.splitlines():
        if not line.startswith("| `"):
            continue
        first, second = line.strip("| ").split(" | ")[:2]
        folders, top = [], "autograder"
        for name in re.findall(r"`([^`]+/)`", first):
            if name.startswith(("autograder/", "shared/")):
                top = name.split("/")[0]
                folders.append(name)
            else:
                folders.append(f"{top}/{name}")
        named = re.findall(r"`([\w/]+\.py)`", first + " " + second)
        found.append((folders, named))
    return found


def test_every_package_of_the_engine_has_its_row():
    listed = {folder for folders, _ in rows() for folder in folders}
    packages = {f"autograder/{p.name}/" for p in (ROOT / "autograder").iterdir() if (p / "__init__.py").is_file()}
    lessons = {f"autograder/lessons/{p.name}/" for p in (ROOT / "autograder" / "lessons").iterdir()
               if (p / "__init__.py").is_file()}
    covered = {p for p in packages if p in listed}
    if "autograder/lessons/<name>/" in listed:
        covered |= {"autograder/lessons/"} & packages
        assert lessons, "the map names autograder/lessons/<name>/ but no lesson package is there"
    assert packages - covered == set(), "docs/maintaining.md's map lacks these packages"


def test_every_module_the_map_names_is_where_it_says():
    missing = []
    for folders, named in rows():
        places = [ROOT / f for f in folders if "<" not in f]
        for name in named:
            at_top = (ROOT / name).is_file() or (ROOT / "autograder" / name).is_file()
            if not at_top and not any(list(place.rglob(Path(name).name)) for place in places if place.is_dir()):
                missing.append(f"{name} (row of {', '.join(folders)})")
    assert not missing, "docs/maintaining.md names modules that are not there: " + "; ".join(missing)
