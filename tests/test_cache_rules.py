"""The compile cache's two rules (casdyn.codegen.cache_dir), in every cache that keeps files:
a file is used only when its bytes match the digest written after it was put in place, and
a cache that another user could write into is not used at all.

Loading happens in fresh processes where a library is involved: the dynamic loader hands a
process the library it already mapped for a path, so only a new process sees what is on disk.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pytest

import casdyn
from casdyn import CacheWarning, CasdynError, sizes
from casdyn.codegen import build, cache_dir

pytestmark = pytest.mark.slow  # compiles in fresh processes

SQUARE = """
import casadi as ca
from casdyn.ocp.compiled import compiled
x = ca.SX.sym("x")
print(float(compiled(ca.Function("cache_rule_square", [x], [x * x + 1]))(3.0)))
"""

CONVEX = """
import numpy as np
from casdyn import geometry as g
rng = np.random.default_rng(3)
a, b = (g.ConvexMesh(rng.normal(size=(40, 3)) * 0.1) for _ in range(2))
pose = np.eye(4)
pose[:3, 3] = [0.25, 0.05, -0.02]
print(repr(float(g.signed_distance(a, np.eye(4), b, pose))))
"""

PLANTED = """
#include <stdio.h>
__attribute__((constructor)) static void planted(void) {
  FILE *marker = fopen("%s", "w");
  if (marker) fclose(marker);
}
"""


def _run(script: str, cache: Path, **env: str) -> subprocess.CompletedProcess:
    environment = {**os.environ, "CASDYN_CACHE": str(cache), **env}
    return subprocess.run([sys.executable, "-c", textwrap.dedent(script)], env=environment,
                          capture_output=True, text=True, timeout=600)


def _damage(path: Path, damage: str) -> None:
    """Replace ``path`` (a new file: a process that mapped the old one keeps it) by an empty
    one or its first half; its digest stays as it was."""
    data = path.read_bytes()
    path.unlink()
    path.write_bytes(b"" if damage == "empty" else data[: len(data) // 2])


def _plant(path: Path, marker: Path, mode: int = 0o644) -> None:
    """A shared library at ``path`` whose constructor creates ``marker`` when loaded, with a
    matching digest beside it, as someone who can write the folder would leave it."""
    source = path.with_name("planted.c")
    source.write_text(PLANTED % marker)
    subprocess.run([build.find_compiler(), "-shared", "-fPIC", str(source), "-o", str(path)],
                   check=True)
    source.unlink()
    cache_dir.digest_path(path).write_text(cache_dir.sha256(path) + "\n")
    for file in (path, cache_dir.digest_path(path)):
        file.chmod(mode)


# --- integrity: a file cut short or emptied is built again, never loaded ---------------------
@pytest.mark.parametrize("damage", ["empty", "truncated"])
def test_a_damaged_convex_routine_library_is_rebuilt(tmp_path, damage):
    """A truncated routine library once killed every later process with SIGBUS, an empty
    one gave CasADi's raw loader error forever."""
    first = _run(CONVEX, tmp_path / "cache")
    assert first.returncode == 0, first.stderr
    [library] = (tmp_path / "cache").glob("libcasdyn_convex_*.so")
    _damage(library, damage)
    again = _run(CONVEX, tmp_path / "cache")
    assert again.returncode == 0, again.stderr
    assert again.stdout == first.stdout
    assert cache_dir.verified(library)


@pytest.mark.parametrize("damage", ["empty", "truncated"])
def test_a_damaged_compiled_ocp_library_is_rebuilt(tmp_path, damage):
    first = _run(SQUARE, tmp_path / "cache")
    assert first.returncode == 0 and float(first.stdout) == 10.0, first.stderr
    [library] = (tmp_path / "cache").glob("libcache_rule_square_*.so")
    _damage(library, damage)
    again = _run(SQUARE, tmp_path / "cache")
    assert again.returncode == 0 and float(again.stdout) == 10.0, again.stderr
    assert cache_dir.verified(library)


@pytest.mark.parametrize("damage", ["empty", "truncated"])
def test_a_damaged_cached_object_is_compiled_again(tmp_path, monkeypatch, damage):
    """Once "file too short" or a missing symbol in every later export of the Function."""
    monkeypatch.setenv("CASDYN_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(sizes, "KEEP_OBJECT", 0)  # every file is kept
    robot = casdyn.load_robot("ur5e")
    names = ["inverse_dynamics", "mass_matrix"]
    robot.export_c(tmp_path / "first", names, batch=True)  # several files: objects
    objects = sorted((tmp_path / "cache" / "objects").glob("*.o"))
    assert len(objects) == 3
    for kept in objects:
        _damage(kept, damage)
    exported = robot.export_c(tmp_path / "second", names, batch=True)
    q = robot.home_configuration() + 0.1
    assert np.allclose(np.asarray(exported["mass_matrix"](q)), robot.mass_matrix(q),
                       rtol=1e-12, atol=1e-12)
    assert all(cache_dir.verified(kept) for kept in objects)


def test_a_damaged_kept_convex_entry_is_not_compiled(tmp_path):
    """The C of a routine's entry kept for a graph deserialised in another process, cut
    short: a clear error that says the hulls are missing, not a compiler's message about
    broken C."""
    cache, graph = tmp_path / "cache", tmp_path / "f.casadi"
    build = _run(f"""
        import casadi as ca, numpy as np
        from casdyn import geometry as g
        rng = np.random.default_rng(4)
        a, b = (g.ConvexMesh(rng.normal(size=(30, 3)) * 0.1) for _ in range(2))
        pose = ca.SX.sym("T", 4, 4)
        f = ca.Function("f", [pose], [g.signed_distance(a, np.eye(4), b, pose)])
        open({str(graph)!r}, "w").write(f.serialize())
        """, cache)
    assert build.returncode == 0, build.stderr
    load = f"""
        import casadi as ca
        from casdyn.ocp.compiled import compiled
        f = ca.Function.deserialize(open({str(graph)!r}).read())
        compiled(f, directory={str(tmp_path / 'ocp')!r})
        print("compiled")
        """
    kept = sorted((cache / "convex").glob("casdyn_convex_*.c"))
    assert kept and all(cache_dir.verified(path) for path in kept)
    assert _run(load, cache).stdout.strip() == "compiled"  # the kept C serves it
    for path in kept:
        _damage(path, "truncated")
    broken = _run(load, cache)
    assert broken.returncode != 0
    assert "neither known to this process nor kept" in broken.stderr


def test_a_cached_file_is_put_in_place_whole_then_sealed(tmp_path):
    target = tmp_path / "kept.bin"
    cache_dir.write_file(target, lambda scratch: scratch.write_bytes(b"x" * 1000))
    assert cache_dir.verified(target)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kept.bin", "kept.bin.sha256"]

    def fails(scratch: Path) -> None:
        scratch.write_bytes(b"half")
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        cache_dir.write_file(tmp_path / "other.bin", fails)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kept.bin", "kept.bin.sha256"]
    target.write_bytes(b"y" * 1000)  # same size, other bytes
    assert not cache_dir.verified(target)


# --- ownership: a cache others can write is not used ----------------------------------------
def _open_folder(path: Path, mode: int = 0o777) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    path.chmod(mode)
    return path


def test_a_library_planted_in_a_world_writable_cache_never_runs(tmp_path):
    """Anyone may write ``shared/``: a library and digest left there under the name the
    victim's build would look for must not be loaded."""
    trusted = tmp_path / "mine"
    assert _run(SQUARE, trusted).returncode == 0
    [built] = trusted.glob("libcache_rule_square_*.so")
    shared = _open_folder(tmp_path / "shared")
    marker = tmp_path / "planted-code-ran"
    _plant(shared / built.name, marker)
    run = _run(SQUARE, shared)
    assert run.returncode == 0 and float(run.stdout) == 10.0, run.stderr
    assert not marker.exists()
    assert "CacheWarning" in run.stderr and str(shared) in run.stderr
    assert "writable by others" in run.stderr


def test_a_library_others_may_write_in_a_trusted_cache_is_rebuilt(tmp_path):
    cache = tmp_path / "cache"
    assert _run(SQUARE, cache).returncode == 0
    [built] = cache.glob("libcache_rule_square_*.so")
    marker = tmp_path / "planted-code-ran"
    built.unlink()
    _plant(built, marker, mode=0o666)
    run = _run(SQUARE, cache)
    assert run.returncode == 0 and float(run.stdout) == 10.0, run.stderr
    assert not marker.exists()
    assert cache_dir.verified(built) and not built.stat().st_mode & stat.S_IWOTH


def _warnings_of(folder: Path) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        used = cache_dir.trusted_folder("ocp", folder)
    messages = [str(w.message) for w in caught if issubclass(w.category, CacheWarning)]
    assert (used.parent == folder) == (not messages)
    return messages


def test_the_cache_rule_follows_the_folders_above(tmp_path):
    assert _warnings_of(tmp_path / "private" / "cache") == []
    sticky = _open_folder(tmp_path / "sticky", 0o1777)  # as /tmp
    assert _warnings_of(sticky / "cache") == []
    assert _warnings_of(sticky) != []  # itself writable by others
    open_parent = _open_folder(tmp_path / "open")  # others could rename cache/ away
    [message] = _warnings_of(open_parent / "cache")
    assert "above it" in message and "not sticky" in message
    group = _open_folder(tmp_path / "group", 0o770)
    [message] = _warnings_of(group)
    assert "writable by its group" in message


@pytest.mark.skipif(not hasattr(os, "getuid") or os.getuid() != 0,
                    reason="giving a folder to another user takes root")
def test_a_cache_of_another_user_is_not_used(tmp_path):
    other = tmp_path / "theirs"
    other.mkdir(mode=0o700)
    os.chown(other, 65534, 65534)
    [message] = _warnings_of(other)
    assert "owned by another user (uid 65534)" in message


def test_compile_warns_and_still_compiles_into_a_private_cache(tmp_path, monkeypatch):
    shared = _open_folder(tmp_path / "shared")
    monkeypatch.setenv("CASDYN_CACHE", str(shared))
    with pytest.warns(CacheWarning, match="does not use the compile cache"):
        robot = casdyn.load_robot("planar_2link").compile(["mass_matrix"])
    assert robot.compiled_functions == ("mass_matrix",)
    assert np.allclose(robot.mass_matrix([0.3, 0.4]),
                       casdyn.load_robot("planar_2link").mass_matrix([0.3, 0.4]), rtol=1e-14)
    assert not list(shared.rglob("*.so"))
    assert issubclass(CacheWarning, UserWarning) and not issubclass(CacheWarning, CasdynError)
