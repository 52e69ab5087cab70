"""The documentation site builds without a warning, and the public API type-checks.

Both run the project's own configuration (``mkdocs.yml``, ``[tool.mypy]`` in
``pyproject.toml``) from the repository root, as a developer would."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

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
