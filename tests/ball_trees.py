"""Random trees with ball joints, for casdyn and for Pinocchio.

URDF has no ball joint: the random URDF trees of :mod:`random_trees` have some of their
revolute and continuous joints turned into ball joints, in casdyn's description (a
``"ball"`` joint spec, as :func:`casdyn.load_mjcf` writes them) and in Pinocchio's model
(rebuilt joint by joint with a ``JointModelSpherical`` in their place, at the same
placement, so that both frames are the child link's).
"""

from __future__ import annotations

from dataclasses import replace

import pinocchio as pin
from pinocchio_reference import Reference
from random_trees import random_urdf

import casdyn
from casdyn.model.build import build_model
from casdyn.model.urdf import read_urdf


def spherical(model: pin.Model, names) -> pin.Model:
    """``model`` with the joints called ``names`` made spherical (bodies and frames kept)."""
    new = pin.Model()
    new.name = model.name
    new.gravity = model.gravity
    new.inertias[0] = model.inertias[0]  # what is fixed to the universe
    for j in range(1, model.njoints):
        joint = pin.JointModelSpherical() if model.names[j] in names else model.joints[j]
        added = new.addJoint(model.parents[j], joint, model.jointPlacements[j], model.names[j])
        new.appendBodyToJoint(added, model.inertias[j], pin.SE3.Identity())
    for frame in list(model.frames)[1:]:  # the universe's frame is there already
        new.addFrame(pin.Frame(frame.name, frame.parentJoint, frame.parentFrame,
                               frame.placement, frame.type, frame.inertia), False)
    return new


def ball_tree(seed: int, floating_base: bool = False, n_links: int = 8, every: int = 2):
    """``(robot, Reference)``: random tree ``seed`` with every ``every``-th of its revolute
    and continuous joints (in document order) a ball joint."""
    text = random_urdf(seed, n_links=n_links, multi_dof=True)
    description = read_urdf(text)
    turning = [j.name for j in description.joints if j.type in ("revolute", "continuous")]
    names = set(turning[::every])
    assert names, "the tree has no revolute joint to make a ball joint"
    description = replace(description, joints=tuple(
        replace(j, type="ball") if j.name in names else j for j in description.joints))
    robot = casdyn.RigidBodyTree(build_model(description, floating_base=floating_base))
    root = (pin.JointModelFreeFlyer(),) if floating_base else ()
    model = spherical(pin.buildModelFromXML(text, *root), names)
    reference = Reference(text, robot.joint_names, robot.body_names,
                          floating_base=floating_base, model=model)
    return robot, reference, sorted(names)
