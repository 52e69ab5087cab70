"""The installed package holds every sub-package of the source tree and its data files."""

from __future__ import annotations

import importlib
import re
from importlib import resources
from pathlib import Path

import casdyn

SOURCE = Path(__file__).resolve().parents[1]


def test_every_subpackage_of_the_source_is_listed_and_installed():
    found = {".".join(p.parent.relative_to(SOURCE).parts)
             for p in (SOURCE / "casdyn").rglob("__init__.py")}
    text = (SOURCE / "pyproject.toml").read_text()
    listed = set(re.findall(r'"(casdyn[\w.]*)"', re.search(r"packages = \[(.*?)\]", text,
                                                            re.S).group(1)))
    assert found <= listed, f"sub-packages missing from pyproject.toml: {sorted(found - listed)}"
    for name in sorted(found):
        importlib.import_module(name)


def test_data_files_are_installed():
    assert resources.files("casdyn.runtime").joinpath("entry.c").is_file()
    assert "ur5e" in casdyn.robot_names()
