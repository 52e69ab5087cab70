"""Files casdyn reads and writes beside the URDF: trajectory files for the viewer, recordings
it saves, mesh files (formats the reader does not read, DAE meshes through pycollada) and
``package://`` mesh names that try to leave their package. Each bad file is a clear error
or a ModelWarning naming it, never a traceback from NumPy or trimesh."""

from __future__ import annotations

import re
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from test_corpus import ROOT

import casdyn
from casdyn.cli import main
from casdyn.errors import CasdynError, InputError, ModelWarning, URDFError
from casdyn.geometry import ConvexMesh, Mesh, Obstacle, Sphere
from casdyn.viewer.trajectory import load


@pytest.fixture(scope="module")
def ur5e():
    return casdyn.load_robot("ur5e")


# --- trajectory files --------------------------------------------------------------------
def _npy(path: Path) -> None:
    with path.open("wb") as file:  # a path would get ".npy" appended
        np.save(file, np.zeros((3, 6)))


def _text(path: Path) -> None:
    path.write_text("t,q\n0,0\n")


def _object_times(path: Path) -> None:
    with path.open("wb") as file:
        np.savez(file, t=np.array([0.0, 0.5], dtype=object), q=np.zeros((2, 6)))


def _object_contacts(path: Path) -> None:
    with path.open("wb") as file:
        np.savez(file, t=[0.0, 0.5], q=np.zeros((2, 6)),
                 contacts=np.array(["tool0", 3], dtype=object))


def _scalars(path: Path) -> None:
    with path.open("wb") as file:
        np.savez(file, t=np.array(0.0), q=np.array(1.0))


@pytest.mark.parametrize("write, message", [
    (_npy, r"is a \.npy \(one array\); a trajectory is a \.npz"),
    (_text, r"is not a \.npz \(the zip archive numpy\.savez writes\)"),
    (_object_times, "t is an array of Python objects"),
    (_object_contacts, r"contacts is an array of Python objects.*strings \(body names\)"),
], ids=["npy", "text", "object-t", "object-contacts"])
def test_a_trajectory_file_that_is_not_a_npz_of_numbers_is_an_input_error(
        tmp_path, write, message):
    path = tmp_path / "run.npz"
    write(path)
    with pytest.raises(InputError, match=f"trajectory file '.*run.npz'.*{message}"):
        load(path)


@pytest.mark.parametrize("write, message", [
    (_npy, r"trajectory file '.*run\.npz' is a \.npy"),
    (_object_times, r"trajectory file '.*run\.npz': t is an array of Python objects"),
    (_scalars,
     r"t must be a 1-D array of sample times, got shape \(\)"),
], ids=["npy", "object-t", "scalars"])
def test_casdyn_show_of_a_bad_trajectory_prints_one_line_and_exits_non_zero(
        tmp_path, capsys, write, message):
    path = tmp_path / "run.npz"
    write(path)
    code = main(["show", "ur5e", "--no-browser", "--trajectory", str(path),
                 "--save", str(tmp_path / "run.html")])
    captured = capsys.readouterr()
    assert code == 2
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("casdyn: error: "), captured.err
    assert re.search(message, lines[0]), lines[0]
    assert not (tmp_path / "run.html").exists()


# --- recordings --------------------------------------------------------------------------
def test_saving_into_a_missing_folder_is_an_error_naming_the_folder(ur5e, tmp_path):
    target = tmp_path / "missing" / "scene.html"
    with ur5e.show() as viewer:
        with pytest.raises(InputError, match=r"the folder '.*missing' does not exist"):
            viewer.save(target)
        (tmp_path / "file").write_text("")
        with pytest.raises(InputError, match=r"the folder '.*file' is not a folder"):
            viewer.save(tmp_path / "file" / "scene.html")
        with pytest.raises(InputError, match="save path must be a path, got int"):
            viewer.save(42)
    assert not (tmp_path / "missing").exists()


def test_a_failed_write_leaves_the_older_recording_whole_and_no_partial_file(
        ur5e, tmp_path, monkeypatch):
    target = tmp_path / "scene.html"
    target.write_text("the older recording")
    real = Path.write_bytes

    def half_then_full_disk(self, data):
        real(self, data[: len(data) // 2])
        raise OSError(28, "No space left on device")

    with ur5e.show() as viewer:
        monkeypatch.setattr(Path, "write_bytes", half_then_full_disk)
        with pytest.raises(CasdynError, match=r"cannot write '.*scene\.html': No space left"):
            viewer.save(target)
    assert target.read_text() == "the older recording"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["scene.html"]


# --- seek ----------------------------------------------------------------------------------
@pytest.mark.parametrize("time_s", [np.nan, np.inf, -np.inf, "0.5", None, True])
def test_seek_refuses_a_time_that_is_not_a_finite_number(ur5e, time_s):
    with ur5e.show() as viewer:
        viewer.play(np.linspace(0, 1, 3), np.zeros((3, 6)))
        viewer.seek(0.6)  # a finite time inside is shown
        assert viewer._time == 0.6
        with pytest.raises(InputError, match="time_s must be a finite number"):
            viewer.seek(time_s)
        assert viewer._time == 0.6


# --- mesh files ----------------------------------------------------------------------------
TWO_LINKS = """<robot name="r">
  <link name="base"><collision><geometry><mesh filename="{collision}"/></geometry></collision>
    <visual><geometry><mesh filename="{visual}"/></geometry></visual></link>
  <link name="arm"><inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0"
    iyz="0"/></inertial>
    <collision><origin xyz="0 0 1"/><geometry><mesh filename="cube.stl"/></geometry></collision>
  </link>
  <joint name="j" type="revolute"><parent link="base"/><child link="arm"/><axis xyz="1 0 0"/>
    <limit lower="-3" upper="3" effort="1" velocity="1"/></joint>
</robot>"""


def _two_links(folder: Path, collision: str, visual: str) -> casdyn.RigidBodyTree:
    import trimesh

    trimesh.creation.box(extents=(0.2, 0.2, 0.2)).export(folder / "cube.stl")
    for name in (collision, visual):
        if not (folder / name).exists():
            (folder / name).write_text("not a mesh")
    path = folder / "r.urdf"
    path.write_text(TWO_LINKS.format(collision=collision, visual=visual))
    return casdyn.load_urdf(path)


def test_a_mesh_format_the_reader_does_not_read_is_left_out_naming_link_file_and_formats(
        tmp_path):
    robot = _two_links(tmp_path, "part.fbx", "part.step")
    with pytest.warns(ModelWarning) as record:
        collision = robot.collision_geometry
        visual = robot.visual_geometry
    said = [str(w.message) for w in record]
    assert any(".fbx files (it reads stl, obj" in s and "'part.fbx' (line 2, <collision> of "
               "link 'base')" in s for s in said), said
    assert any(".step files" in s and "<visual> of link 'base'" in s for s in said), said
    assert [item.name for item in collision] == ["arm_0"] and visual == ()
    # the rest is still usable: the arm's cube, 1 m up, against an obstacle sphere at 0
    obstacle = Obstacle("ball", Sphere(0.1))
    assert np.allclose(robot.collision_distances([0.0], pairs=[], obstacles=[obstacle]),
                       [1.0 - 0.1 - 0.1])
    with robot.show(geometry="collision") as viewer:
        assert viewer.geometry == "collision"


def test_a_mesh_file_that_cannot_be_parsed_is_an_error_naming_it(tmp_path):
    (tmp_path / "junk.dae").write_text("<COLLADA>no geometry</COLLADA>")
    with pytest.raises(CasdynError, match=r"mesh file '.*junk\.dae' could not be read"):
        Mesh(str(tmp_path / "junk.dae")).vertices()


def test_a_dae_mesh_without_pycollada_says_the_install_command(tmp_path, monkeypatch):
    robot = _two_links(tmp_path, "cube.stl", "part.dae")
    monkeypatch.setitem(sys.modules, "collada", None)
    with pytest.warns(ModelWarning, match=r"DAE \(COLLADA\) files need pycollada: pip install "
                      r"pycollada; left out 1 mesh element\(s\): 'part\.dae' \(line 3, "
                      r"<visual> of link 'base'\)"):
        assert robot.visual_geometry == ()
    with pytest.raises(CasdynError, match="pip install pycollada"):
        Mesh(str(tmp_path / "part.dae")).vertices()


GO1 = ROOT / "go1_description/urdf/go1.urdf"


@pytest.mark.slow  # several seconds: the quick tier stays quick
def test_go1_loads_its_dae_meshes_without_warnings(tmp_path):
    """example-robot-data's Go1 is drawn by 21 COLLADA meshes: with the extras installed
    (pycollada), each is read with the triangles the file holds, and casdyn show draws them
    without a warning."""
    import collada

    from casdyn.viewer.meshes import mesh_triangles

    robot = casdyn.load_urdf(GO1, floating_base=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        visual = robot.visual_geometry
        meshes = [item for item in visual if isinstance(item.shape, Mesh)]
        assert len(meshes) == 21
        assert all(item.shape.path.endswith(".dae") for item in meshes)
        for path in sorted({item.shape.path for item in meshes}):
            _, faces = mesh_triangles(path)
            # the triangles the file holds, counted by pycollada itself
            document = collada.Collada(path)
            expected = sum(len(p) for g in document.geometries for p in g.primitives)
            assert len(faces) == expected > 0, path
        assert main(["show", str(GO1), "--floating-base", "--save",
                     str(tmp_path / "go1.html")]) == 0


# --- package:// names ---------------------------------------------------------------------
def _package(tmp_path: Path, filename: str) -> casdyn.RigidBodyTree:
    import trimesh

    (tmp_path / "pkg" / "meshes").mkdir(parents=True)
    trimesh.creation.box(extents=(1, 1, 1)).export(tmp_path / "pkg" / "meshes" / "cube.stl")
    trimesh.creation.box(extents=(1, 1, 1)).export(tmp_path / "secret.stl")
    urdf = f"""<robot name="r"><link name="base"><collision><geometry>
      <mesh filename="{filename}"/></geometry></collision></link></robot>"""
    (tmp_path / "pkg" / "r.urdf").write_text(urdf)
    return casdyn.load_urdf(tmp_path / "pkg" / "r.urdf", package_dirs=[tmp_path])


@pytest.mark.parametrize("filename", [
    "package://pkg/../secret.stl",
    "package://pkg/meshes/../../secret.stl",
    "package://../secret.stl",
    "package://pkg\\..\\..\\secret.stl",
], ids=["above-package", "deeper", "no-package", "backslashes"])
def test_a_package_path_that_leaves_its_package_is_refused(tmp_path, filename):
    robot = _package(tmp_path, filename)
    with pytest.raises(URDFError, match=r"<collision> of link 'base': mesh '.*secret\.stl' "
                       "leaves its package folder"):
        _ = robot.collision_geometry


@pytest.mark.parametrize("filename", ["package://pkg/meshes/../meshes/cube.stl",
                                      "package://pkg//meshes/./cube.stl"])
def test_a_package_path_that_stays_inside_is_read(tmp_path, filename):
    robot = _package(tmp_path, filename)
    (item,) = robot.collision_geometry
    assert isinstance(item.shape, ConvexMesh)
    assert Path(item.shape.mesh.path).resolve() == (tmp_path / "pkg/meshes/cube.stl").resolve()
