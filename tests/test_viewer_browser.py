"""The viewer in a real browser: headless Chromium (Debian's ``chromium``, WebGL in software)
loads the page and its screenshots show the robot drawn, moving, in a saved recording opened
from disk, and served by ``casdyn show``.

Every check compares screenshots of the same page: "drawn" means many pixels differ from the
same scene with the robot removed (which must itself show the rendered ground grid, so a
blank page fails both ways); "moves" means many pixels differ between two configurations.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from browser import Browser, save_png

import casdyn

pytestmark = pytest.mark.slow  # a real browser renders each page

FEET = ("FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT")
MANY = 400  # pixels: a robot drawn at this window size covers thousands
SHOTS = Path(os.environ.get("CASDYN_SCREENSHOTS", "")) if os.environ.get(
    "CASDYN_SCREENSHOTS") else None


def _keep(image: np.ndarray, name: str) -> None:
    """Keep a screenshot for a human to look at when CASDYN_SCREENSHOTS names a folder."""
    if SHOTS is not None:
        SHOTS.mkdir(parents=True, exist_ok=True)
        save_png(image, SHOTS / f"{name}.png")


def _canvas(image: np.ndarray) -> np.ndarray:
    """The 3D view: the notification corner (top left), the axes gizmo (bottom left) and the
    live page's control panel (its right 330 pixels; a recording has none) masked out."""
    view = image.astype(int).copy()
    view[:170, :340] = 0
    view[-90:, :90] = 0
    if _has_panel(image):
        view[:, -330:] = 0
    return view


def _has_panel(image: np.ndarray) -> bool:
    """The live page's control panel: its blue "Play / pause" or "Reset View" buttons."""
    corner = image[:160, -330:].astype(int)
    blue = (corner[..., 2] > 200) & (corner[..., 0] < 80) & (corner[..., 1] > 100)
    return int(np.count_nonzero(blue)) > 500


def _differing(a: np.ndarray, b: np.ndarray) -> int:
    return int(np.count_nonzero(np.abs(_canvas(a) - _canvas(b)).max(axis=2) > 24))


def _scene_shown(browser, most: float = 60.0) -> np.ndarray:
    """A screenshot once the ground grid is drawn (a page that plays never settles)."""
    deadline = time.monotonic() + most
    while True:
        shot = browser.screenshot()
        if _grid_drawn(shot) or time.monotonic() > deadline:
            return shot
        time.sleep(1.0)


def _grid_drawn(image: np.ndarray) -> bool:
    """The WebGL canvas rendered something: the ground grid's grey lines on white."""
    view = _canvas(image)
    grey = (view.min(axis=2) > 100) & (view.max(axis=2) < 235) & (np.ptp(view, axis=2) < 16)
    return int(np.count_nonzero(grey)) > MANY


def _opened(browser) -> np.ndarray:
    """The page just opened, once it shows the rendered scene and is still for a second
    (the loading screen before it is still too)."""
    return browser.settled(_grid_drawn, least=0.0)


def _changed(browser, before: np.ndarray) -> np.ndarray:
    """The page once it differs from the screenshot ``before`` (a scene update sent to it is
    drawn in one go) and is still; ``before`` again after 40 s of no change."""
    return browser.settled(lambda shot: not np.array_equal(shot, before), least=0.0, step=0.5)


@pytest.fixture(scope="module")
def chromium():
    with Browser(width=960, height=640) as chromium:
        yield chromium


@pytest.fixture
def browser(chromium):
    yield chromium
    # a page left open keeps drawing in software (WebGL on the CPU), a core taken from the
    # tests that run beside this module
    chromium.blank()


@pytest.fixture(scope="module")
def ur5e():
    return casdyn.load_robot("ur5e")


@pytest.fixture(scope="module")
def solo():
    return casdyn.load_robot("solo12", floating_base=True)


def _bent(robot) -> tuple[np.ndarray, np.ndarray]:
    q1 = robot.home_configuration()
    q1[1], q1[2] = -1.2, 1.5
    q2 = q1.copy()
    q2[0], q2[1], q2[2] = 1.4, -0.4, 0.3
    return q1, q2


def _drawn_and_moving(browser, viewer, q1, q2, name):
    viewer.update(q1)
    browser.open(viewer.url)
    first = _opened(browser)
    viewer.update(q2)
    second = _changed(browser, first)
    viewer.server.scene.remove_by_name("/robot")
    empty = _changed(browser, second)
    for image, label in ((first, "q1"), (second, "q2"), (empty, "empty")):
        _keep(image, f"{name}_{label}")
    assert _grid_drawn(empty), "the page shows no rendered scene"
    assert _differing(first, empty) > MANY, "the robot is not drawn"
    assert _differing(second, empty) > MANY, "the robot is not drawn at q2"
    assert _differing(first, second) > MANY, "the robot does not move"
    return first


def test_robot_geometry_is_drawn_and_moves(browser, ur5e):
    q1, q2 = _bent(ur5e)
    with ur5e.show(q1) as viewer:
        assert viewer.geometry == "collision"
        _drawn_and_moving(browser, viewer, q1, q2, "ur5e_capsules")


def test_visual_mesh_files_are_drawn_and_move(browser, tmp_path):
    import warnings

    from test_viewer import _mesh_urdf

    path = tmp_path / "meshes.urdf"
    path.write_text(_mesh_urdf(tmp_path))
    robot = casdyn.load_urdf(path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the unreadable DAE, tested in test_viewer.py
        viewer = robot.show()
    with viewer:
        assert viewer.geometry == "visual"
        _drawn_and_moving(browser, viewer, np.array([0.0]), np.array([1.2]), "meshes")


def test_robot_without_geometry_draws_its_frames_and_moves(browser, solo):
    q1 = solo.named_configurations["standing"]
    q2 = q1.copy()
    q2[2] += 0.1
    q2[7:] = solo.named_configurations["straight_standing"][7:]
    with solo.show(q1) as viewer:
        assert viewer.geometry == "frames"
        first = _drawn_and_moving(browser, viewer, q1, q2, "solo12_frames")
    # the frames' axes are red, green and blue: saturated pixels the empty scene lacks
    view = _canvas(first)
    saturated = np.ptp(view, axis=2) > 120
    assert int(np.count_nonzero(saturated)) > 100


def test_saved_recording_opens_from_disk(browser, ur5e, tmp_path):
    q1, q2 = _bent(ur5e)
    with ur5e.show(q1) as viewer:
        robot = viewer.save(tmp_path / "robot.html")
        viewer.update(q2)
        moved = viewer.save(tmp_path / "moved.html")
        viewer.server.scene.remove_by_name("/robot")
        empty = viewer.save(tmp_path / "empty.html")
    shots = {}
    for path in (robot, moved, empty):
        browser.open(path.as_uri())
        shots[path.stem] = _opened(browser)
        _keep(shots[path.stem], f"recording_{path.stem}")
    assert _grid_drawn(shots["empty"])
    assert _differing(shots["robot"], shots["empty"]) > MANY
    assert _differing(shots["robot"], shots["moved"]) > MANY


def _trot(solo, n=61, duration=2.0):
    t = np.linspace(0.0, duration, n)
    q = np.tile(solo.named_configurations["standing"], (n, 1))
    q[:, 0] = 0.3 * t / duration  # the base walks forward 0.3 m
    q[:, 2] += 0.03 * np.sin(2 * np.pi * t / duration)
    forces = np.zeros((n, 4, 3))
    forces[:, :, 2] = solo.mass * 9.81 / 4
    forces[:, 0, 0] = 5.0 * np.sin(2 * np.pi * t / duration)
    return t, q, forces


def test_recorded_trajectory_plays_from_disk(browser, solo, tmp_path):
    t, q, forces = _trot(solo)
    with solo.show(q[0]) as viewer:
        viewer.play(t, q, forces, FEET, com=True)
        page = viewer.save(tmp_path / "trot.html")
    browser.open(page.as_uri())
    _scene_shown(browser)
    time.sleep(2.0)  # the scene fades in
    first = browser.screenshot()
    time.sleep(0.7)  # 0.7 s of a 2 s loop: another pose whatever the phase
    second = browser.screenshot()
    _keep(first, "trot_recording_a")
    _keep(second, "trot_recording_b")
    assert _grid_drawn(first)
    assert _differing(first, second) > MANY, "the recording does not play"


def test_contact_forces_cones_and_com_are_drawn(browser, solo):
    t, q, forces = _trot(solo)
    with solo.show(q[0]) as viewer:
        viewer.play(t, q, forces, FEET, com=True)
        viewer.seek(0.5)
        browser.open(viewer.url)
        everything = _opened(browser)
        for i, foot in enumerate(FEET):
            viewer.server.scene.remove_by_name(f"/robot/{foot}/contact_{i}")
        no_forces = _changed(browser, everything)
        viewer.server.scene.remove_by_name("/robot/base_link/com")
        no_com = _changed(browser, no_forces)
    _keep(everything, "solo12_forces_com")
    assert _grid_drawn(no_com)
    assert _differing(everything, no_forces) > MANY, "no force arrows or friction cones"
    assert _differing(no_forces, no_com) > 30, "no centre of mass"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _casdyn_show(*args) -> subprocess.Popen:
    # faulthandler: a process that does not stop dumps its threads' stacks (see _stop)
    env = dict(os.environ, PYTHONPATH=str(Path(casdyn.__file__).parents[1]),
               PYTHONFAULTHANDLER="1")
    return subprocess.Popen([sys.executable, "-m", "casdyn.cli", "show", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def _url_of(process: subprocess.Popen, timeout: float = 120.0) -> str:
    """The first line casdyn show prints: its URL."""
    import selectors

    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ)
        if not selector.select(timeout):
            raise AssertionError("casdyn show printed no URL in time")
    return process.stdout.readline().strip()


def _stop(process: subprocess.Popen) -> tuple[int, str]:
    """Interrupt ``process`` as Ctrl-C does; one that has not stopped a minute later (the
    machine may be loaded) is aborted, and its stderr then holds every thread's stack."""
    process.send_signal(signal.SIGINT)
    try:
        _, err = process.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        process.send_signal(signal.SIGABRT)
        try:
            _, err = process.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            _, err = process.communicate(timeout=20)
    return process.returncode, err


def test_casdyn_show_serves_solo12_until_interrupted(browser, tmp_path):
    port = _free_port()
    process = _casdyn_show("solo12", "--floating-base", "--no-browser", "--port", str(port))
    try:
        url = _url_of(process)
        assert url == f"http://127.0.0.1:{port}"
        browser.open(url)
        shot = _opened(browser)
        _keep(shot, "cli_solo12")
    finally:
        code, err = _stop(process)
    assert code == 0, err
    assert _grid_drawn(shot)
    # the robot's frames: red, green and blue axes
    assert int(np.count_nonzero(np.ptp(_canvas(shot), axis=2) > 120)) > 100


def test_casdyn_show_plays_a_trajectory_file_with_forces(browser, solo, tmp_path):
    t, q, forces = _trot(solo)
    run = tmp_path / "trot.npz"
    np.savez(run, t=t, q=q, forces=forces, contacts=np.array(FEET))
    process = _casdyn_show("solo12", "--floating-base", "--no-browser", "--trajectory",
                           str(run))
    try:
        url = _url_of(process)
        browser.open(url)
        _scene_shown(browser)
        time.sleep(1.0)
        first = browser.screenshot()
        time.sleep(0.7)
        second = browser.screenshot()
        _keep(first, "cli_trot_a")
    finally:
        code, err = _stop(process)
    assert code == 0, err
    assert _grid_drawn(first)
    assert _differing(first, second) > MANY, "the trajectory does not play"


def test_casdyn_show_save_writes_a_page_and_exits(tmp_path):
    out = tmp_path / "solo.html"
    process = _casdyn_show("solo12", "--floating-base", "--save", str(out))
    stdout, stderr = process.communicate(timeout=120)
    assert process.returncode == 0, stderr
    assert stdout.strip() == str(out)
    assert "__VISER_EMBED_DATA__" in out.read_text()
