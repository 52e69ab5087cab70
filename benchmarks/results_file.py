"""benchmarks/RESULTS.md, section by section: each benchmark script replaces the sections it
measured (a ``## title`` and its body) and keeps the others, with the run's machine and
versions written under each of its titles."""

from __future__ import annotations

import os
import platform
import re
from importlib import metadata
from pathlib import Path

import casdyn

RESULTS = Path(__file__).resolve().parent / "RESULTS.md"
HEADER = ("# casdyn benchmark results\n\n"
          "Each section names the script that measured it, the machine and the versions; every "
          "ratio in a section was measured in the same run as the numbers it compares.\n")


def _sections(text: str) -> list[tuple[str, str]]:
    """``(title, body)`` of every ``## title`` in ``text``, in order."""
    parts = re.split(r"^## (.+)$", text, flags=re.MULTILINE)
    return [(parts[k].strip(), parts[k + 1].strip("\n")) for k in range(1, len(parts), 2)]


def update(sections: list[tuple[str, str]], source: str, machine: str) -> Path:
    """Write ``sections`` ((title, body) pairs) into RESULTS.md in place of the sections of the
    same titles (new ones at the end), each under a line naming ``source`` (the command that
    measured it) and ``machine``; every other section is kept as it was."""
    old = _sections(RESULTS.read_text(encoding="utf-8")) if RESULTS.exists() else []
    new = {title: f"Measured by `{source}` on {machine}.\n\n{body.strip()}"
           for title, body in sections}
    merged = [(title, new.pop(title, body)) for title, body in old]
    merged += [(title, body) for title, body in new.items()]
    text = HEADER + "".join(f"\n## {title}\n\n{body}\n" for title, body in merged)
    RESULTS.write_text(text, encoding="utf-8")
    return RESULTS


def machine(packages: tuple[str, ...]) -> str:
    """The platform, processor, core count and the versions of Python, ``packages`` and
    casdyn."""
    cpuinfo = Path("/proc/cpuinfo")
    cpu = next((line.split(":", 1)[1].strip() for line in cpuinfo.read_text().splitlines()
                if "model name" in line), platform.processor()) if cpuinfo.exists() else \
        platform.processor()
    versions = ", ".join(f"{p} {metadata.version(p)}" for p in packages)
    return (f"{platform.platform()}, {cpu}, {os.cpu_count()} cores; Python "
            f"{platform.python_version()}; {versions}; casdyn {casdyn.__version__}")
