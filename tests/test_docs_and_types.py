"""The documentation site builds without a warning, and the public API type-checks; every
page is reachable, every public name documented, and the pages' samples run.

Both run the project's own configuration (``mkdocs.yml``, ``[tool.mypy]`` in
``pyproject.toml``) from the repository root, as a developer would."""

from __future__ import annotations

import importlib
import importlib.util
import os
import pkgutil
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import casdyn

ROOT = Path(__file__).resolve().parents[1]


def _run(*command: str, tmp_path: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    return subprocess.run([sys.executable, "-m", *command], cwd=ROOT, env=env, text=True,
                          capture_output=True, timeout=600)


@pytest.mark.slow
def test_the_documentation_site_builds_strictly(tmp_path):
    result = _run("mkdocs", "build", "--strict", "--quiet", "--site-dir", str(tmp_path),
                  tmp_path=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert (tmp_path / "api" / "index.html").is_file()
    assert "RigidBodyTree" in (tmp_path / "api" / "index.html").read_text(encoding="utf-8")


@pytest.mark.slow
def test_the_public_api_type_checks(tmp_path):
    result = _run("mypy", "--cache-dir", str(tmp_path), tmp_path=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr


# --- the front door: every page reachable, every public name documented, the samples run ----
DOCS = ROOT / "docs"
API_ENTRIES = re.findall(r"^::: (\S+)$", (DOCS / "api.md").read_text(encoding="utf-8"), re.M)
# the package's insides (docs/api.md says so, docs/architecture.md describes them): a new
# top-level module goes here or gets its entries in docs/api.md
INTERNAL_MODULES = {"algorithms", "arguments", "cli", "codegen", "demo", "errors", "facade",
                    "function_spec", "functions", "math", "model", "plotting", "progress",
                    "runtime", "sizes", "tree"}


def _python_blocks(page: str) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", (DOCS / page).read_text(encoding="utf-8"),
                      re.M | re.S)


def _public_modules() -> list[str]:
    """``casdyn`` and the modules docs/api.md documents as modules (``::: casdyn.ocp``)."""
    return ["casdyn"] + [name for name in API_ENTRIES
                         if name.count(".") == 1 and importlib.util.find_spec(name)]


def test_every_top_level_module_is_either_public_or_internal():
    # casdyn.robots holds the shipped robots' files (a data package: no code to document);
    # an installed casdyn has it as a folder, an editable install maps it from robots/
    found = {m.name for m in pkgutil.iter_modules(casdyn.__path__)
             if not m.name.startswith("_") and m.name != "robots"}
    public = {name.split(".")[1] for name in _public_modules() if "." in name}
    assert not public & INTERNAL_MODULES
    assert found == public | INTERNAL_MODULES, (
        f"new modules to document in docs/api.md or to call internal: "
        f"{sorted(found - public - INTERNAL_MODULES)}; gone: "
        f"{sorted((public | INTERNAL_MODULES) - found)}")


def test_the_api_reference_has_an_entry_for_every_public_name_and_no_other():
    expected = set()
    for module in _public_modules():
        names = importlib.import_module(module).__all__
        expected |= {f"{module}.{name}" for name in names}
    expected |= set(_public_modules()) - {"casdyn"}
    entries = set(API_ENTRIES)
    assert len(entries) == len(API_ENTRIES), "a name has two entries in docs/api.md"
    assert not expected - entries, f"public names without an entry: {sorted(expected - entries)}"
    assert not entries - expected, f"entries of no public name: {sorted(entries - expected)}"


def test_every_page_is_in_the_navigation_and_in_the_front_pages_table():
    nav = re.findall(r"^  - [^:\n]+: (\S+\.md)$", (ROOT / "mkdocs.yml").read_text(), re.M)
    pages = [p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md")]
    assert not set(pages) - set(nav), f"pages not in mkdocs.yml's nav: {set(pages) - set(nav)}"
    assert sorted(nav) == sorted(pages)
    index = (DOCS / "index.md").read_text(encoding="utf-8")
    table = re.findall(r"^\| \[[^\]]+\]\(([\w-]+\.md)\) \|", index, re.M)
    missing = set(nav) - {"index.md"} - set(table)
    assert not missing, f"pages missing from index.md's 'Where to go next': {sorted(missing)}"
    assert sorted(table) == sorted(set(nav) - {"index.md"})


def test_the_readmes_links_to_the_docs_lead_to_pages_and_headings():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    links = re.findall(r"\]\((docs/[\w-]+\.md)(?:#([\w-]+))?\)", readme)
    assert len(links) >= 14
    for page, anchor in links:
        assert (ROOT / page).is_file(), page
        text = (ROOT / page).read_text(encoding="utf-8")
        if anchor:
            headings = {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-")
                        for h in re.findall(r"^#+ (.*)$", text, re.M)}
            assert anchor in headings, f"{page}#{anchor}"


def test_the_front_pages_sample_runs(capsys):
    namespace: dict = {}
    exec(compile(_python_blocks("index.md")[0], "docs/index.md", "exec"), namespace)
    assert np.abs(namespace["qdd"]).max() < 1e-9  # the inverse/forward round trip
    M = namespace["M"]
    assert np.allclose(M, M.T) and np.linalg.eigvalsh(M).min() > 0
    assert namespace["J"].shape == (6, 6)
    assert "True" in capsys.readouterr().out


@pytest.mark.slow
def test_the_mpc_pages_loop_runs_and_crouches():
    """The loop as the page shows it, in CasADi's VM (tests/test_ocp_problem.py checks the
    compiled stages against their graphs), with MuJoCo as the plant."""
    code = _python_blocks("mpc.md")[0]
    assert code.count("compile=True") == 1
    namespace: dict = {}
    exec(compile(code.replace("compile=True", "compile=False"), "docs/mpc.md", "exec"),
         namespace)
    x, x_ref, q = namespace["x"], namespace["x_ref"], namespace["q"]
    assert abs(q[2] - x_ref[2] - 0.04) < 0.01  # asked 4 cm down from standing
    assert abs(x[2] - x_ref[2]) < 0.005  # there, to within 5 mm
    assert np.abs(x[namespace["robot"].nq:]).max() < 0.05  # and nearly still


@pytest.mark.slow
def test_the_mpc_pages_own_quadruped_trots(capsys):
    """The page's Go1 (not shipped: its URDF from example-robot-data) walks at about the
    commanded speed in MuJoCo without falling, with the code as printed."""
    [code] = [block for block in _python_blocks("mpc.md") if "go1.urdf" in block]
    assert code.count("SQP(problem, ") == 1
    # in CasADi's VM: the compiled stages are the same graphs (tests/test_ocp_problem.py)
    code = code.replace("SQP(problem, ", "SQP(problem, compile=False, ")
    with pytest.warns(casdyn.ModelWarning, match="'camera_laserscan_link_left'"):
        exec(compile(code, "docs/mpc.md", "exec"), {})
    walked, height = map(float, re.search(r"walked (\S+) m in 5.0 s, base at (\S+) m",
                                          capsys.readouterr().out).groups())
    assert walked > 0.8 * 0.4 * 4.7 and height > 0.25


def test_the_readmes_test_command_is_what_ci_runs():
    """The README's second command is .ci/run, which runs .ci/test: one script, not two
    copies of a command line that drift apart."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    commands = re.search(r"^## Two commands\n.*?```bash\n(.*?)```", readme, re.M | re.S).group(1)
    assert ".ci/run" in commands.splitlines()
    assert (ROOT / ".ci" / "run").read_text().rstrip().endswith("\n.ci/test")
    steps = (ROOT / ".ci" / "test").read_text()
    for step in ('pip install -q ".[test]"', "ruff check .",
                 'pytest -q -n auto --durations=25 "$@"'):
        assert f"\n{step}\n" in steps, step
