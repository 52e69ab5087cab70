"""Grouped inertial parameters: the same joint-space dynamics from sparser body inertias.

Some parts of a body's inertia cannot be told apart by its joint from the same parts on the
parent body (Khalil & Kleinfinger, "Minimum operations and minimum parameters of the dynamic
models of tree structure robots", IEEE J. Robotics and Automation 3(6), 1987; Gautier &
Khalil, "Direct calculation of minimum set of inertial parameters of serial robots", IEEE
Trans. Robotics and Automation 6(3), 1990):

Which part that is depends on the joint type (``JointType.split`` in
:mod:`casdyn.model.joints`):

* revolute joint (axis z): an *axial* part -- the body's whole mass placed on the axis,
  with the z part of its first moment and rotational inertia ``diag(a, a, 0)`` about the
  frame origin. Its kinetic and potential energy depend on neither ``q_i`` nor ``qd_i``
  (it is symmetric about the axis and has no inertia about it). With ``a = I_yy`` the body
  keeps a massless remainder with ``h_z = I_yy = 0``.
* prismatic joint: the rotational inertia about the centre of mass (the body does not turn
  relative to its parent). The body keeps a point mass.

Each part moves to the parent through the joint's constant pose, leaves first, so that what a
body receives moves on with it; what reaches the fixed base has no effect and is dropped.
The Lagrangian is unchanged, and with it ``M(q)``, ``C(q, qd) qd``, ``g(q)`` and everything
built from them; the body forces inside the algorithms are not, so the grouped model serves
joint-space dynamics only (the centre of mass uses the real inertias). In body-frame RNEA
the massless remainders lose the ``m a`` products and the zeroed first-moment and inertia
entries, 10-20 % of the graph on the benchmark arms.
"""

from __future__ import annotations

from dataclasses import replace

from .tree import Model


def grouped(model: Model) -> Model:
    """``model`` with its joints' inertias grouped towards the base (see the module text)."""
    inertias = [joint.inertia for joint in model.joints]
    for i in reversed(model.order):
        joint = model.joints[i]
        moved, inertias[i] = joint.type.split(inertias[i])
        if joint.parent >= 0:
            inertias[joint.parent] = inertias[joint.parent] + moved.transformed(
                joint.rotation, joint.translation
            )
    joints = tuple(
        replace(joint, inertia=inertia)
        for joint, inertia in zip(model.joints, inertias, strict=True)
    )
    return replace(model, joints=joints)
