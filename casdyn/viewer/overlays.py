"""What the viewer draws over the robot while it plays a trajectory: the force on each
contact (an arrow, green inside its friction cone, red outside) with the cone, and the
centre of mass with its line down to the ground and its ground projection.

Every overlay node rides on a body's node with base-frame axes, so that a page applying
updates late never shows an overlay apart from its body.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from . import scene as draw
from .meshes import cone
from .trajectory import Trajectory

RED, GREEN, BLUE = (220, 40, 40), (40, 170, 60), (60, 120, 230)
COM_RED = (230, 40, 40)
HIDDEN = (1.0, 1.0, 1e-6)  # the scale of a unit arrow or line drawn at zero length


class Overlays:
    """The contact-force and centre-of-mass nodes of one viewer.

    ``scene``: viser's scene; ``size`` (m): the robot's size, which sets the nodes' sizes;
    ``body_node(name)``: the node of a body, made if it has none; ``path(name)``: its scene
    path.
    """

    def __init__(self, scene, size: float, body_node: Callable[[str], object],
                 path: Callable[[str], str]):
        self._scene = scene
        self._size = size
        self._body_node = body_node
        self._path = path
        self._contacts: list = []  # (group, (inside, outside) arrows, cone) per contact
        self._com: tuple = ()  # (carrier body, group, ground disc, line)
        self._half_angle = 0.0
        self._force_scale = 0.0

    def make_contacts(self, shaped: Trajectory, half_angle: float, force_scale: float) -> None:
        """Per contact of ``shaped``, a node at the contact point on its body holding the
        force arrows and the friction cone of half angle ``half_angle`` (rad); an arrow is
        ``force_scale`` (m/N) long per newton."""
        for group, _, _ in self._contacts:
            group.remove()
        self._contacts = []
        self._half_angle, self._force_scale = half_angle, force_scale
        vertices, faces = cone(half_angle, 0.3 * self._size)
        for i, (body, point) in enumerate(zip(shaped.bodies, shaped.points, strict=True)):
            self._body_node(body)
            name = f"{self._path(body)}/contact_{i}"
            group = self._scene.add_frame(name, show_axes=False, position=point)
            # a unit arrow along z, stretched to the force by its node's scale
            arrows = tuple(self._scene.add_arrows(
                f"{name}/force_{kind}", np.array([[[0.0, 0.0, 0.0], [0.0, 0.0, 1.0]]]),
                color, shaft_radius=0.015 * self._size, head_radius=0.035 * self._size,
                head_length=0.15, scale=HIDDEN, visible=False)
                for kind, color in (("inside", GREEN), ("outside", RED)))
            cone_node = self._scene.add_mesh_simple(f"{name}/cone", vertices, faces,
                                                    color=BLUE, opacity=0.25, side="double",
                                                    cast_shadow=False, visible=False)
            self._contacts.append((group, arrows, cone_node))

    def show_com(self, visible: bool, carrier: str) -> None:
        """The centre of mass (a ball), a line down to the ground and a disc there, in one
        node riding on the body ``carrier`` (``<body path>/com``)."""
        if visible and not self._com:
            self._body_node(carrier)
            name = f"{self._path(carrier)}/com"
            radius = 0.03 * self._size
            self._com = (
                carrier,
                self._scene.add_frame(name, show_axes=False),
                self._scene.add_cylinder(f"{name}/ground", radius=1.5 * radius, height=0.002,
                                         color=COM_RED, cast_shadow=False),
                self._scene.add_line_segments(f"{name}/line",
                                              np.array([[[0.0, 0, 0], [0, 0, -1]]]), COM_RED,
                                              thickness=0.15 * radius, scale=HIDDEN),
            )
            self._scene.add_icosphere(f"{name}/ball", radius=radius, color=COM_RED)
        if self._com:
            self._com[1].visible = visible

    def draw_com(self, poses: np.ndarray, index: dict[str, int], com: np.ndarray) -> None:
        """Place the centre-of-mass nodes for body poses ``poses`` (k, 4, 4; rows by
        ``index``) and the centre of mass ``com`` (3,), base frame."""
        if not (self._com and self._com[1].visible):
            return
        carrier, group, ground, line = self._com
        pose = poses[index[carrier]]
        height = max(float(com[2]), 1e-6)  # m above the ground z = 0
        group.position = pose[:3, :3].T @ (com - pose[:3, 3])
        group.wxyz = draw.wxyz(pose[:3, :3].T)  # base-frame axes
        ground.position = (0.0, 0.0, -height)
        line.scale = (1.0, 1.0, height)

    def draw_forces(self, poses: np.ndarray, index: dict[str, int], bodies, forces,
                    visible_below: float) -> None:
        """Draw ``forces`` (nc, 3), base-frame axes, on the contacts of ``bodies``; forces
        of at most ``visible_below`` (N) mean no contact and are hidden."""
        tan = np.tan(self._half_angle)
        for i, (group, (inside_arrow, outside_arrow), cone_node) in enumerate(self._contacts):
            rotation = poses[index[bodies[i]]][:3, :3]
            group.wxyz = draw.wxyz(rotation.T)  # undo the body's turn: base-frame axes
            f = forces[i]
            size = float(np.linalg.norm(f))
            on = size > visible_below
            inside = np.hypot(f[0], f[1]) <= tan * f[2] + 1e-9
            for arrow, shown in ((inside_arrow, on and inside), (outside_arrow, on and not inside)):
                if shown:
                    arrow.wxyz = draw.wxyz(draw.z_to(f / size))
                    arrow.scale = (1.0, 1.0, self._force_scale * size)
                arrow.visible = shown
            cone_node.visible = on

    def clear_stretched(self) -> None:
        """Arrows and the centre-of-mass line back to zero length, the arrows hidden."""
        for _, arrows, _ in self._contacts:
            for arrow in arrows:
                arrow.scale = HIDDEN
                arrow.visible = False
        if self._com:
            self._com[3].scale = HIDDEN
