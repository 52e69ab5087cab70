"""casdyn.viewer without a browser: the poses it draws, its inputs and errors, the trajectory
file, the geometry it picks, the server's lifetime (the browser tests are in
test_viewer_browser.py)."""

from __future__ import annotations

import socket
import sys
import urllib.request

import numpy as np
import pytest

import casdyn
from casdyn.errors import CasdynError, InputError
from casdyn.viewer.poses import pose_function
from casdyn.viewer.scene import wxyz
from casdyn.viewer.trajectory import load, trajectory

FEET = ("FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT")

BOX_URDF = """<robot name="boxes">
  <link name="base"><visual><geometry><box size="0.2 0.2 0.1"/></geometry></visual></link>
  <link name="arm"><inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1" ixy="0"
    ixz="0" iyz="0"/></inertial>
    <visual><origin xyz="0 0 0.2"/><geometry><cylinder radius="0.03" length="0.4"/>
    </geometry></visual></link>
  <joint name="j" type="revolute"><parent link="base"/><child link="arm"/>
    <axis xyz="1 0 0"/><limit lower="-3" upper="3" effort="1" velocity="1"/></joint>
</robot>"""


@pytest.fixture(scope="module")
def ur5e():
    return casdyn.load_robot("ur5e")


@pytest.fixture(scope="module")
def solo():
    return casdyn.load_robot("solo12", floating_base=True)


def _quaternion_matrix(w, x, y, z):
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
        [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
        [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
    ])


@pytest.mark.parametrize("name", ["ur5e", "solo12"])
def test_all_body_poses_in_one_function_equal_get_transform(name, ur5e, solo):
    robot = ur5e if name == "ur5e" else solo
    model = robot.model
    bodies = (model.base_name, *model.body_names)
    function = pose_function(model, bodies)
    rng = np.random.default_rng(3)
    for _ in range(3):
        q = robot.random_configuration(rng)
        poses, com = function(q)
        poses = np.asarray(poses)
        for i, body in enumerate(bodies[1:], start=1):
            expected = robot.get_transform(q, body)
            np.testing.assert_allclose(poses[:, 4 * i:4 * i + 4], expected, atol=1e-12)
        np.testing.assert_allclose(poses[:, :4], np.eye(4), atol=0)
        np.testing.assert_allclose(np.asarray(com).ravel(), robot.center_of_mass(q)[0],
                                   atol=1e-12)


def test_quaternion_of_a_rotation_gives_the_rotation_back():
    rng = np.random.default_rng(0)
    rotations = [np.eye(3), np.diag([1.0, -1, -1]), np.diag([-1.0, 1, -1]),
                 np.diag([-1.0, -1, 1])]  # half turns: the trace is -1
    for _ in range(50):
        matrix, _ = np.linalg.qr(rng.normal(size=(3, 3)))
        rotations.append(matrix * np.sign(np.linalg.det(matrix)))
    for R in rotations:
        q = wxyz(R)
        assert abs(np.linalg.norm(q) - 1) < 1e-12
        np.testing.assert_allclose(_quaternion_matrix(*q), R, atol=1e-12)


def test_geometry_drawn_is_visual_then_collision_then_frames(ur5e, solo, tmp_path):
    path = tmp_path / "boxes.urdf"
    path.write_text(BOX_URDF)
    boxes = casdyn.load_urdf(path)
    with boxes.show() as viewer:
        assert viewer.geometry == "visual"
    with boxes.show(geometry="frames") as viewer:
        assert viewer.geometry == "frames"
    with ur5e.show() as viewer:  # shipped arms: collision capsules, no visual elements
        assert viewer.geometry == "collision"
    with solo.show(geometry="collision") as viewer:  # shipped solo12: no geometry at all
        assert viewer.geometry == "frames"


def test_viewer_serves_the_page_on_localhost_and_frees_the_port(ur5e):
    viewer = ur5e.show()
    try:
        assert viewer.url == f"http://127.0.0.1:{viewer.port}"
        with urllib.request.urlopen(viewer.url, timeout=10) as page:
            assert page.status == 200
            assert b"<html" in page.read(2000).lower()
    finally:
        viewer.close()
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", viewer.port))  # free again


def test_a_busy_port_is_an_error_naming_it(ur5e):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        with pytest.raises(CasdynError, match=f"port {port}"):
            ur5e.show(port=port)


@pytest.mark.parametrize("port", [0, 70000, "8080", 1.5, True])
def test_a_bad_port_is_an_input_error(ur5e, port):
    with pytest.raises(InputError, match="port"):
        ur5e.show(port=port)


def test_bad_inputs_are_clear_errors(ur5e, solo, tmp_path):
    with pytest.raises(InputError, match="geometry"):
        ur5e.show(geometry="meshes")
    with pytest.raises(InputError, match="q"):
        ur5e.show(np.zeros(5))
    with ur5e.show() as viewer:
        with pytest.raises(InputError, match="q"):
            viewer.update(np.zeros(7))
        with pytest.raises(InputError, match="finite"):
            viewer.update(np.full(6, np.nan))
        with pytest.raises(InputError, match=r"\.html or \.viser"):
            viewer.save(tmp_path / "scene.png")
        with pytest.raises(InputError, match="unknown body"):
            viewer.show_frames(["wrist_9_link"])
        with pytest.raises(CasdynError, match="play first"):
            viewer.seek(0.0)
    t = np.linspace(0, 1, 5)
    q = np.tile(solo.home_configuration(), (5, 1))
    names = (solo.model.base_name, *solo.body_names)
    with pytest.raises(InputError, match="increasing"):
        trajectory(t[::-1], q, solo.nq, names)
    with pytest.raises(InputError, match=r"q must be \(5, 19\)"):
        trajectory(t, q[:, :7], solo.nq, names)
    with pytest.raises(InputError, match="forces need contacts"):
        trajectory(t, q, solo.nq, names, forces=np.zeros((5, 4, 3)))
    with pytest.raises(InputError, match=r"forces must be \(5, 4, 3\)"):
        trajectory(t, q, solo.nq, names, np.zeros((5, 3, 3)), FEET)
    with pytest.raises(InputError, match="unknown contact body 'FL_FOT'"):
        trajectory(t, q, solo.nq, names, np.zeros((5, 4, 3)), ("FL_FOT", *FEET[1:]))
    with solo.show() as viewer, pytest.raises(InputError, match="mu"):
        viewer.play(t, q, np.zeros((5, 4, 3)), FEET, mu=-1)


def test_forces_stacked_per_contact_and_contact_points(solo):
    t = np.linspace(0, 1, 3)
    q = np.tile(solo.home_configuration(), (3, 1))
    names = (solo.model.base_name, *solo.body_names)
    flat = np.arange(3 * 12, dtype=float).reshape(3, 12)
    contacts = [casdyn.Contact("FL_FOOT", point=(0, 0, -0.01)), *FEET[1:]]
    shaped = trajectory(t, q, solo.nq, names, flat, contacts)
    assert shaped.forces.shape == (3, 4, 3)
    np.testing.assert_array_equal(shaped.forces[1, 2], flat[1, 6:9])
    np.testing.assert_array_equal(shaped.points[0], [0, 0, -0.01])
    assert shaped.bodies == FEET
    assert [shaped.index(x) for x in (-1, 0, 0.49, 0.5, 0.99, 7)] == [0, 0, 0, 1, 1, 2]


def test_trajectory_file_round_trip_and_missing_arrays(tmp_path, solo):
    path = tmp_path / "run.npz"
    t = np.linspace(0, 1, 4)
    q = np.tile(solo.home_configuration(), (4, 1))
    np.savez(path, t=t, q=q, v=np.zeros((4, 18)), forces=np.ones((4, 4, 3)),
             contacts=np.array(FEET))
    data = load(path)
    assert data["contacts"] == FEET
    np.testing.assert_array_equal(data["q"], q)
    np.savez(tmp_path / "bad.npz", t=t)
    with pytest.raises(InputError, match="has no q"):
        load(tmp_path / "bad.npz")
    with pytest.raises(InputError, match="cannot be read"):
        load(tmp_path / "missing.npz")


def test_play_update_and_save_run_without_a_browser(solo, tmp_path):
    t = np.linspace(0, 0.5, 26)
    q = np.tile(solo.named_configurations["standing"], (len(t), 1))
    q[:, 2] += 0.02 * np.sin(4 * np.pi * t)
    forces = np.zeros((len(t), 4, 3))
    forces[:, :, 2] = solo.mass * 9.81 / 4
    with solo.show() as viewer:
        assert viewer.play(t, q, forces, FEET, com=True) is viewer
        html = viewer.save(tmp_path / "run.html")
        recording = viewer.save(tmp_path / "run.viser")
        viewer.update(q[3])
    text = html.read_text()
    assert "__VISER_EMBED_DATA__" in text
    assert "https://" not in text and "http://" not in text.replace(
        "http://www.w3.org", "")  # nothing fetched from the network
    assert recording.stat().st_size > 1000


def test_missing_viser_is_a_clear_error(monkeypatch, ur5e):
    monkeypatch.setitem(sys.modules, "viser", None)
    with pytest.raises(CasdynError, match=r'pip install "casdyn\[viewer\]"'):
        ur5e.show()


def _mesh_urdf(folder) -> str:
    """A two-link robot drawn by an STL box and an OBJ cylinder, files written by trimesh."""
    import trimesh

    trimesh.creation.box(extents=(0.3, 0.3, 0.1)).export(folder / "base.stl")
    trimesh.creation.cylinder(radius=0.04, height=0.5).export(folder / "arm.obj")
    (folder / "broken.dae").write_text("<COLLADA>not a mesh</COLLADA>")
    return """<robot name="meshes">
  <link name="base"><visual><geometry><mesh filename="base.stl"/></geometry></visual>
    <visual><geometry><mesh filename="broken.dae"/></geometry></visual></link>
  <link name="arm"><inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1" ixy="0"
    ixz="0" iyz="0"/></inertial>
    <visual><origin xyz="0 0 0.25"/><geometry><mesh filename="arm.obj" scale="1 1 1"/>
    </geometry></visual></link>
  <joint name="j" type="revolute"><parent link="base"/><child link="arm"/>
    <origin xyz="0 0 0.05"/><axis xyz="1 0 0"/>
    <limit lower="-3" upper="3" effort="1" velocity="1"/></joint>
</robot>"""


def test_mesh_files_are_read_with_their_triangles_and_an_unreadable_one_is_left_out(
        tmp_path):
    import trimesh

    from casdyn.errors import ModelWarning
    from casdyn.viewer.meshes import mesh_triangles

    path = tmp_path / "meshes.urdf"
    path.write_text(_mesh_urdf(tmp_path))
    vertices, faces = mesh_triangles(str(tmp_path / "arm.obj"), (2.0, 1.0, 1.0))
    reference = trimesh.load(tmp_path / "arm.obj", force="mesh", process=False)
    np.testing.assert_allclose(vertices, reference.vertices * [2, 1, 1], atol=1e-6)
    np.testing.assert_array_equal(faces, reference.faces)
    robot = casdyn.load_urdf(path)
    with pytest.warns(ModelWarning, match="broken.dae"), robot.show() as viewer:
        assert viewer.geometry == "visual"


def test_selected_frames_show_their_axes(ur5e):
    with ur5e.show() as viewer:
        nodes = viewer._body_nodes
        viewer.show_frames(["wrist_3_link", "tool0"])  # tool0: no geometry, a new node
        assert {name for name, node in nodes.items() if node.show_axes} == {"wrist_3_link",
                                                                             "tool0"}
        np.testing.assert_allclose(nodes["tool0"].position,
                                   ur5e.get_transform(ur5e.home_configuration(), "tool0")[:3, 3])
        viewer.show_frames([])
        assert not any(node.show_axes for node in nodes.values())


def test_casdyn_show_stops_on_ctrl_c_even_when_started_with_sigint_ignored():
    """A process started in the background of a script inherits SIGINT ignored (so Python
    raises no KeyboardInterrupt): ``casdyn show`` still stops on it, cleanly."""
    import os
    import signal
    import subprocess
    from pathlib import Path

    env = dict(os.environ, PYTHONPATH=str(Path(casdyn.__file__).parents[1]))
    process = subprocess.Popen(
        [sys.executable, "-m", "casdyn.cli", "show", "planar_2link", "--no-browser"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    try:
        assert process.stdout.readline().startswith("http://127.0.0.1:")
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 0, err
    assert "casdyn show: stopped" in err
