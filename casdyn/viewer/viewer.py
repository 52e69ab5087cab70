"""The 3D viewer: a robot drawn in a web page served by viser on 127.0.0.1, moved by
configurations or played along a trajectory with its contact forces, friction cones and
centre of mass.

The scene, in the base frame (the world for a floating base; z up, the ground at z = 0):

* ``/robot/<body>``: one node per body at its pose, holding the body's geometry at each
  element's pose (``Geometry.pose``); with ``geometry="frames"`` (or a robot without geometry)
  the body frames' axes and segments from each body's origin to its children's;
* ``/robot/<first body>/com``: the centre of mass, a line down to the ground and a disc
  there (its projection);
* ``/robot/<body>/contact_<i>/force_inside|force_outside|cone``: the force on contact ``i``
  (an arrow from the contact point, green inside its friction cone, red outside) and the
  friction cone ``|f_t| <= mu f_n`` about the ground normal +z, shown while the force is
  nonzero.

Every configuration is drawn from one compiled CasADi Function (:mod:`.poses`).
"""

from __future__ import annotations

import os
import threading
import time
import webbrowser
from pathlib import Path

import numpy as np

from .. import arguments
from ..errors import CasdynError, InputError, unknown_name
from . import scene as draw
from . import server
from .overlays import Overlays
from .poses import pose_function
from .trajectory import Trajectory, friction_half_angle, trajectory

GEOMETRY_KINDS = ("visual", "collision", "frames")
DEFAULT_MU = 0.7
"""The default ``mu`` of :meth:`Viewer.play`'s friction cones: a rubber foot on a hard floor;
pass the value of your own model."""
FRAME_RATE = 30.0  # Hz: playback redraws and recorded frames


def require_viser():
    """The ``viser`` module, or a clear error naming the extra to install."""
    try:
        import viser
    except ImportError:
        raise CasdynError('the viewer needs viser: pip install "casdyn[viewer]"') from None
    return viser


def _safe(name: str) -> str:
    return name.replace("/", "_") or "_"


def _path(body: str) -> str:
    """The scene path of a body's node."""
    return f"/robot/{_safe(body)}"


class Viewer:
    """A robot in a browser page served on ``127.0.0.1`` (:attr:`url`).

    ``geometry``: ``"visual"`` (the URDF's ``<visual>`` shapes and meshes; the collision
    shapes when there are none, the frames when there are neither), ``"collision"`` (the
    ``<collision>`` shapes; the frames when there are none) or ``"frames"`` (body frames and
    the segments joining them). :attr:`geometry` says what was drawn. ``port=None`` takes a
    free port; a given port that is in use is an error. ``open_browser`` opens the page in
    the default browser. Use it as a context manager, or call :meth:`close`.
    """

    def __init__(self, robot, q=None, *, geometry: str = "visual", port: int | None = None,
                 open_browser: bool = False):
        viser = require_viser()
        if geometry not in GEOMETRY_KINDS:
            raise InputError(f"geometry must be one of {', '.join(map(repr, GEOMETRY_KINDS))}, "
                             f"got {geometry!r}")
        self._robot = robot
        model = robot.model
        self._nq = model.nq
        self.geometry, items = draw.chosen_geometry(robot, geometry)
        self._bodies = (model.base_name, *model.body_names)
        self._index = {name: i for i, name in enumerate(self._bodies)}
        self._poses = pose_function(model, self._bodies)
        self._mass = float(robot.mass)
        self._gravity = float(np.linalg.norm(model.gravity))
        q0 = robot.home_configuration() if q is None else q
        q0 = self._configuration(q0)
        poses0 = self._evaluate(q0)[0]
        origins = poses0[:, :3, 3]
        span = float(np.max(np.ptp(origins, axis=0))) if len(origins) > 1 else 0.0
        reach = max((draw.reach(item) for item in items), default=0.0)
        # m: sets axes, markers, grid and the camera distance
        self._size = max(span, 2 * reach, 0.2)
        self._server = server.serve(viser, port, robot.name)
        try:
            self._build(items, poses0)
            self._lock = threading.RLock()
            self._trajectory: Trajectory | None = None
            self._overlays = Overlays(self._server.scene, self._size, self._body_node,
                                      _path)
            self._gui: dict = {}
            self._time = 0.0
            self._setting = False  # the slider is being moved by the player, not the user
            self._playing = False
            self._stop = threading.Event()
            self._player: threading.Thread | None = None
            self._q = q0
            self._draw(q0)
        except BaseException:
            server.stop(self._server)
            raise
        if arguments.flag(open_browser, "open_browser"):
            webbrowser.open(self.url)

    # --- public API -------------------------------------------------------------------
    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT``: the page to open."""
        return f"http://127.0.0.1:{self._server.get_port()}"

    @property
    def port(self) -> int:
        return self._server.get_port()

    @property
    def server(self):
        """The underlying ``viser.ViserServer``, to add your own scene nodes or controls."""
        return self._server

    def update(self, q) -> None:
        """Draw the robot at configuration ``q`` (nq,); stops a trajectory that is playing."""
        q = self._configuration(q)
        with self._lock:
            self._playing = False
            self._q = q
            self._draw(q)

    def show_frames(self, bodies) -> None:
        """Draw the axes of these bodies' frames (names of :attr:`robot.body_names`), besides
        the geometry; an empty sequence hides them again."""
        bodies = (bodies,) if isinstance(bodies, str) else tuple(bodies)
        for name in bodies:
            if name not in self._index:
                raise unknown_name("body", name, self._bodies)
        axes = self._axes_length
        for name in bodies:
            if name not in self._body_nodes:  # a body without geometry: a node of its own
                pose = self._last_poses[self._index[name]]
                self._body_nodes[name] = self._server.scene.add_frame(
                    f"/robot/{_safe(name)}", show_axes=False, position=pose[:3, 3],
                    wxyz=draw.wxyz(pose[:3, :3]))
        for name, node in self._body_nodes.items():
            node.show_axes = self.geometry == "frames" or name in bodies
            node.axes_length, node.axes_radius = axes, axes / 15

    def play(self, t, q, forces=None, contacts=None, com: bool = False, loop: bool = True, *,
             mu: float = DEFAULT_MU, force_scale: float | None = None) -> Viewer:
        """Play a trajectory in the page, with a time slider and play/pause; returns at once
        (the playback runs in the server's thread).

        ``t`` (N,) increasing sample times (s), ``q`` (N, nq); ``forces`` (N, nc, 3) or
        (N, 3 nc): the force on each contact, base-frame axes (N), as ``contact_dynamics``
        returns them; ``contacts``: the nc body names or ``casdyn.Contact`` objects (their
        points are where the arrows start). ``com`` draws the centre of mass and its ground
        projection. ``mu``: the friction coefficient of the cones drawn (default 0.7).
        ``force_scale`` (m/N): default draws the robot's weight as long as the robot is big.
        """
        shaped = trajectory(t, q, self._nq, self._bodies, forces, contacts)
        half_angle = friction_half_angle(mu)
        if force_scale is None:
            weight = self._mass * self._gravity
            force_scale = self._size / weight if weight > 0 else 0.01
        path = np.array([self._evaluate(self._configuration(x))[0][:, :3, 3]
                         for x in shaped.q[:: max(1, len(shaped.q) // 50)]])
        self._frame_view(path.reshape(-1, 3))
        with self._lock:
            self._trajectory = shaped
            self._overlays.make_contacts(shaped, half_angle, float(force_scale))
            carrier = self._bodies[1] if len(self._bodies) > 1 else self._bodies[0]
            self._overlays.show_com(bool(com), carrier)
            self._make_controls(shaped, arguments.flag(loop, "loop"))
            self._playing = len(shaped.t) > 1
            self._show_time(float(shaped.t[0]))
        if self._player is None:
            self._player = threading.Thread(target=self._run, name="casdyn-viewer", daemon=True)
            self._player.start()
        return self

    def seek(self, time_s: float) -> None:
        """Pause the trajectory being played and show it at time ``time_s`` (s): the last
        sample at or before it; a time outside the trajectory shows its first or last
        sample."""
        time_s = arguments.finite_number(time_s, "seek time_s")
        with self._lock:
            if self._trajectory is None:
                raise CasdynError("seek needs a trajectory: call play first")
            self._playing = False
            self._show_time(time_s)

    def save(self, path) -> Path:
        """Write a recording that opens without Python: ``.html`` is one self-contained page
        (viser's web client with the recording inlined; no network needed), ``.viser`` viser's
        recording file (played by viser's client with ``?playbackPath=``). With a trajectory,
        the recording plays it (at most 30 frames per second) in a loop; otherwise it holds
        the robot as drawn now. The folder must exist (a mistyped one is an
        :class:`InputError`, not created); the file is written whole or not at all."""
        if not isinstance(path, str | os.PathLike):
            raise InputError(f"save path must be a path, got {type(path).__name__}")
        path = Path(path).expanduser()
        if path.suffix not in (".html", ".viser"):
            raise InputError(f"save path must end in .html or .viser, got {str(path)!r}")
        folder = path.parent
        if not folder.is_dir():
            what = "is not a folder" if folder.exists() else "does not exist"
            raise InputError(f"save path {str(path)!r}: the folder {str(folder)!r} {what}")
        if path.is_dir():
            raise InputError(f"save path {str(path)!r} is a folder")
        with self._lock:
            playing, self._playing = self._playing, False
            shaped = self._trajectory
            if shaped is not None:
                # the scene's snapshot keeps poses but not every later property change (the
                # arrows' lengths): clear those, so that drawing sample 0 records them
                self._draw_sample(0)
                self._overlays.clear_stretched()
            serializer = self._server.get_scene_serializer()
            if shaped is not None:
                times = _recorded_times(shaped.t)
                for k, time_k in enumerate(times):
                    self._draw_sample(shaped.index(time_k))
                    if k + 1 < len(times):
                        serializer.insert_sleep(times[k + 1] - time_k)
                if len(times) > 1:  # one sample: a still scene
                    serializer.insert_sleep(1.0 / FRAME_RATE)
            data = serializer.as_html() if path.suffix == ".html" else serializer.serialize()
            if shaped is not None:
                self._show_time(self._time)
            self._playing = playing
        _write_whole(path, data.encode("utf-8") if isinstance(data, str) else data)
        return path

    def close(self) -> None:
        """Stop the playback and the server (the port is free again)."""
        self._stop.set()
        if self._player is not None:
            self._player.join(timeout=5)
        server.stop(self._server)

    def __enter__(self) -> Viewer:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<casdyn Viewer of {self._robot.name} at {self.url} ({self.geometry})>"

    # --- scene ----------------------------------------------------------------------------
    @property
    def _axes_length(self) -> float:
        return float(np.clip(0.12 * self._size, 0.02, 0.3))

    def _build(self, items, origins_poses) -> None:
        scene = self._server.scene
        # the controls beside the canvas rather than over it
        self._server.gui.configure_theme(show_share_button=False)
        self._server.gui.main_panel.dock_right()
        scene.set_up_direction("+z")
        self._frame_view(origins_poses[:, :3, 3])
        frames = self.geometry == "frames"
        axes = self._axes_length
        drawn = {item.body for item in items}
        self._body_nodes = {}
        for name in self._bodies:
            if frames or name in drawn:
                self._body_nodes[name] = scene.add_frame(
                    f"/robot/{_safe(name)}", show_axes=frames, axes_length=axes,
                    axes_radius=axes / 15)
        color = draw.COLORS["collision" if self.geometry == "collision" else "visual"]
        for item in items:
            draw.add_shape(scene, f"/robot/{_safe(item.body)}/{_safe(item.name)}", item.shape,
                           item.pose, color)
        if frames:
            self._add_links(origins_poses)

    def _frame_view(self, points: np.ndarray) -> None:
        """The ground grid and the camera (the initial one and every open page's) around
        ``points`` (k, 3), world frame: the robot's body origins, or the path of a moving
        base, so that a robot walking away stays in view."""
        low, high = points.min(axis=0), points.max(axis=0)
        size = max(self._size, float(np.max(high[:2] - low[:2])))
        centre = (low + high) / 2
        cell = 10.0 ** np.floor(np.log10(self._size / 2))
        extent = float(np.ceil(3 * size / cell) * cell)
        self._server.scene.add_grid("/ground", width=extent, height=extent, cell_size=cell,
                                    section_size=10 * cell, position=(centre[0], centre[1], 0.0))
        look_at = tuple(float(x) for x in centre)
        position = tuple(float(x) for x in centre + size * np.array([1.0, -1.35, 0.8]))
        self._server.initial_camera.look_at = look_at
        self._server.initial_camera.position = position
        for client in self._server.get_clients().values():
            client.camera.look_at = look_at
            client.camera.position = position

    def _add_links(self, poses) -> None:
        """A segment from each body's origin to each child's, fixed in the parent body's
        frame (taken at the first configuration: exact for revolute and fixed joints, whose
        child origin stays put in the parent frame; a prismatic child moves off its end).
        Only poses change afterwards, which recordings replay faithfully."""
        scene = self._server.scene
        for body in self._robot.model.bodies:
            if body.parent not in self._index:
                continue
            parent = poses[self._index[body.parent]]
            child = poses[self._index[body.name]]
            end = parent[:3, :3].T @ (child[:3, 3] - parent[:3, 3])
            if np.linalg.norm(end) > 1e-9:
                scene.add_line_segments(
                    f"/robot/{_safe(body.parent)}/link_to_{_safe(body.name)}",
                    np.array([[np.zeros(3), end]]), (80, 80, 100),
                    thickness=self._axes_length / 6)

    def _body_node(self, name: str):
        """The node of body ``name``, made (without geometry) if it has none."""
        if name not in self._body_nodes:
            self._body_nodes[name] = self._server.scene.add_frame(_path(name), show_axes=False)
        return self._body_nodes[name]

    # --- drawing --------------------------------------------------------------------------
    def _configuration(self, q) -> np.ndarray:
        q = np.asarray(arguments.vector(q, "q", self._nq), dtype=float)
        if q.ndim != 1:
            raise InputError(f"q must be one configuration ({self._nq},), got shape {q.shape}")
        return q

    def _evaluate(self, q) -> tuple[np.ndarray, np.ndarray]:
        poses, com = self._poses(q)
        poses = np.asarray(poses, dtype=float)
        stacked = poses.reshape(4, len(self._bodies), 4).transpose(1, 0, 2)
        return stacked, np.asarray(com, dtype=float).ravel()

    def _draw(self, q, forces=None) -> None:
        poses, com = self._evaluate(q)
        self._last_poses = poses
        with self._server.atomic():
            for name, node in self._body_nodes.items():
                pose = poses[self._index[name]]
                node.position = pose[:3, 3]
                node.wxyz = draw.wxyz(pose[:3, :3])
            self._overlays.draw_com(poses, self._index, com)
            if forces is not None:
                visible_below = 1e-6 * max(self._mass * self._gravity, 1.0)  # N: "no contact"
                self._overlays.draw_forces(poses, self._index, self._trajectory.bodies,
                                           forces, visible_below)

    def _draw_sample(self, k: int) -> None:
        shaped = self._trajectory
        self._draw(shaped.q[k], None if shaped.forces is None else shaped.forces[k])

    # --- playback -------------------------------------------------------------------------
    def _make_controls(self, shaped: Trajectory, loop: bool) -> None:
        gui = self._server.gui
        for handle in self._gui.values():
            handle.remove()
        self._gui = {}
        t0, t1 = float(shaped.t[0]), float(shaped.t[-1])
        step = float(np.min(np.diff(shaped.t))) if len(shaped.t) > 1 else 1.0
        self._gui = {
            "play": gui.add_button("Play / pause"),
            "time": gui.add_slider("time (s)", min=t0, max=max(t1, t0 + step), step=step,
                                   initial_value=t0),
            "loop": gui.add_checkbox("loop", initial_value=loop),
        }

        @self._gui["play"].on_click
        def _(_event) -> None:
            with self._lock:
                if not self._playing and self._time >= t1 and not self._gui["loop"].value:
                    self._time = t0
                self._playing = not self._playing

        @self._gui["time"].on_update
        def _(_event) -> None:
            with self._lock:
                if not self._setting:
                    self._show_time(float(self._gui["time"].value))

    def _show_time(self, time_s: float) -> None:
        self._time = time_s
        self._draw_sample(self._trajectory.index(time_s))
        self._setting = True
        try:
            self._gui["time"].value = time_s
        finally:
            self._setting = False

    def _run(self) -> None:
        last = time.monotonic()
        while not self._stop.wait(1.0 / FRAME_RATE):
            now = time.monotonic()
            elapsed, last = now - last, now
            with self._lock:
                if not self._playing or self._trajectory is None:
                    continue
                t = self._trajectory.t
                time_s = self._time + elapsed
                if time_s > t[-1]:
                    if self._gui["loop"].value:
                        time_s = t[0] + (time_s - t[-1]) % max(t[-1] - t[0], 1e-9)
                    else:
                        time_s, self._playing = float(t[-1]), False
                self._show_time(float(time_s))


def _write_whole(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a file beside it, renamed once complete, so that a
    failed write leaves no part of a recording (and an older file at ``path`` intact)."""
    partial = path.with_name(f".{path.name}.{os.getpid()}.partial")
    try:
        partial.write_bytes(data)
        os.replace(partial, path)
    except OSError as error:
        partial.unlink(missing_ok=True)
        raise CasdynError(f"cannot write {str(path)!r}: {error.strerror or error}") from None


def _recorded_times(t: np.ndarray) -> list[float]:
    """Sample times at most ``FRAME_RATE`` per second, the first and last always kept."""
    kept = [float(t[0])]
    for value in t[1:]:
        if value - kept[-1] >= 1.0 / FRAME_RATE - 1e-12:
            kept.append(float(value))
    if kept[-1] != float(t[-1]):
        kept.append(float(t[-1]))
    return kept
