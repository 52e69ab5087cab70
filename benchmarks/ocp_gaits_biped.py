"""TALOS's legs for :mod:`ocp_gaits`: Crocoddyl's biped gait problems
(``crocoddyl.utils.biped``'s ``SimpleBipedGaitProblem``, as its
``examples/bipedal_gaits_fwddyn.py`` builds them on example-robot-data's ``talos_legs``).

example-robot-data's ``talos_legs`` is TALOS's ``talos_reduced.urdf`` cut at the torso: its
free flyer carries the base link (and the links fixed to it) and the two legs, the torso,
arms and head are left out (not locked: their mass is gone), every leg joint has the SRDF's
rotor inertia as armature (0.1), and the links fixed to the legs (the soles, 0.01 kg) weigh
twice theirs: its loader adds the kept frames to the model, and Pinocchio (3 and later)
appends a frame's inertia to its joint once more. casdyn's robot is the same URDF cut and
weighed the same way (:func:`legs_urdf`) with the same armature. The feet are the soles
(``*_sole_link``), each held flat by a 6-D contact (casdyn's ``contact="6d"``: the wrench
``[n; f]`` about the sole's origin, world axes, as Crocoddyl's ``LOCAL_WORLD_ALIGNED``
``ContactModel6D``; gains ``[0, 30]``), its wrench cone a barrier of that wrench
(:func:`ocp_gaits.cone_matrix`), the swing foot's task its placement
(:class:`casdyn.ocp.FramePlacement`).

One difference is left: a held sole's constraint. Crocoddyl's 6-D contact holds the sole's
spatial acceleration plus ``30 v`` (sole frame), casdyn's the classical one (world axes):
they differ by the sole's ``w x v``, zero for a sole at rest. Both problems' costs and each
knot's next state agree to 1e-12 at any configuration with the velocities zero; with the
velocities perturbed the next states differ (up to 0.3 in the tangent norm at 0.3 rad/s, m/s
of noise), so the optima differ slightly.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np
from ocp_gaits import TALOS_GAITS, Legged

import casdyn
from casdyn.ocp import FramePlacement

TORSO_JOINT = "torso_1_joint"  # the one movable joint on the base link that is not a leg's


def legs_urdf(path: str, cut: str = TORSO_JOINT) -> str:
    """The URDF at ``path`` without joint ``cut`` and everything below it (links, joints
    and the transmissions of those joints), the links of the fixed joints left twice their
    mass and inertia (as example-robot-data's ``talos_legs``), as URDF text."""
    root = ET.parse(path).getroot()
    _remove_below(root, cut)
    fixed = {j.find("child").get("link") for j in root.findall("joint")
             if j.get("type") == "fixed"}
    for link in root.findall("link"):
        if link.get("name") in fixed and link.find("inertial") is not None:
            _scale_inertial(link.find("inertial"), 2.0)
    return ET.tostring(root, encoding="unicode")


def _scale_inertial(inertial, factor: float) -> None:
    """Mass and inertia tensor times ``factor`` (the centre of mass where it is)."""
    mass = inertial.find("mass")
    mass.set("value", repr(factor * float(mass.get("value"))))
    tensor = inertial.find("inertia")
    for key, value in tensor.attrib.items():
        tensor.set(key, repr(factor * float(value)))


def _remove_below(root, cut: str) -> None:
    """Remove joint ``cut`` of the URDF tree ``root`` and everything below it."""
    joints = root.findall("joint")
    below = {j.find("parent").get("link"): [] for j in joints}
    for j in joints:
        below[j.find("parent").get("link")].append(j)
    removed_joints, stack = {cut}, [next(j for j in joints if j.get("name") == cut)]
    removed_links = set()
    while stack:
        joint = stack.pop()
        link = joint.find("child").get("link")
        removed_links.add(link)
        for child in below.get(link, []):
            removed_joints.add(child.get("name"))
            stack.append(child)
    for element in list(root):
        name = element.get("name")
        if (element.tag == "link" and name in removed_links) or \
                (element.tag == "joint" and name in removed_joints) or \
                (element.tag == "transmission" and _drives(element, removed_joints)):
            root.remove(element)


def _drives(transmission, joints: set) -> bool:
    return any(j.get("name") in joints for j in transmission.iter("joint"))


class Biped(Legged):
    """TALOS's legs, as ``crocoddyl.utils.biped``'s generator builds its problems."""

    gaits = TALOS_GAITS
    feet = ("right_sole_link", "left_sole_link")
    prefix = "talos"
    contact = "6d"
    gains = (0.0, 30.0)

    foot_task = (FramePlacement, "placement")

    def __init__(self):
        import example_robot_data

        talos = example_robot_data.load("talos_legs")
        model = talos.model
        armature = {name: float(model.armature[model.joints[model.getJointId(name)].idx_v])
                    for name in list(model.names)[2:]}
        robot = casdyn.load_urdf(legs_urdf(talos.urdf), floating_base=True,
                                 armature=armature)
        q0 = model.referenceConfigurations["half_sitting"]
        super().__init__(model, robot, np.r_[q0, np.zeros(model.nv)])

    def generator(self):
        from crocoddyl.utils.biped import SimpleBipedGaitProblem

        return SimpleBipedGaitProblem(self.pin_model, *self.feet)
