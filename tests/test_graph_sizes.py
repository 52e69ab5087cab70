"""Graph sizes (CasADi n_instructions) of the shipped robots stay at or below their ceilings.

The ceilings are the sizes measured when they were committed; an optimisation lowers them
(update the numbers), a regression fails here. benchmarks/run.py compares them with peers.
Forward dynamics' ceilings rose once, by about three instructions per joint, when its
quotients by one number became products by that number's reciprocal
(``casdyn.math.spatial.reciprocal``: one division per joint instead of seven, faster on
the CPU and on the GPU).
"""

from __future__ import annotations

import casadi as ca
import pytest

import casdyn

CEILINGS = {
    "kuka_iiwa14": {"ID": 778, "ID_nofext": 505, "FD": 1382, "FD_nofext": 1109, "M": 371,
                   "dID_nofext": 4264, "dFD_nofext": 6088, "Y": 2256},
    "planar_2link": {"ID": 50, "ID_nofext": 30, "FD": 68, "FD_nofext": 48, "M": 15,
                    "dID_nofext": 48, "dFD_nofext": 89},
    "scara": {"ID": 113, "ID_nofext": 58, "FD": 135, "FD_nofext": 80, "M": 49,
             "dID_nofext": 129, "dFD_nofext": 198},
    "torso_two_arms": {"ID": 807, "ID_nofext": 474, "FD": 1412, "FD_nofext": 1079, "M": 331,
                      "dID_nofext": 2925, "dFD_nofext": 4709},
    "ur5e": {"ID": 730, "ID_nofext": 448, "FD": 1410, "FD_nofext": 1130, "M": 365,
            "dID_nofext": 2879, "dFD_nofext": 4102, "Y": 1696},
    "solo12": {"ID": 1129, "ID_nofext": 821, "FD": 1814, "FD_nofext": 1506, "M": 343,
               "dID_nofext": 3033, "dFD_nofext": 3959},
}
# floating base (floating_base=True), with the bias force C qd + g ("h")
FEET = [casdyn.Contact(f"{leg}_FOOT") for leg in ("FL", "FR", "HL", "HR")]  # solo12's
FLOATING_CEILINGS = {
    "solo12": {"ID": 2120, "ID_nofext": 1423, "FD": 4064, "FD_nofext": 3367, "M": 1028,
               "h": 1323, "dID_nofext": 11365, "dFD_nofext": 27817,
               # the task-space and contact functions (issue 11; adam: A_G 4,043, Jdot 583
               # body-fixed = in the foot's axes, 1,469 mixed = base-frame axes)
               "A_G": 1734, "Jdot": 486, "Jdot_local": 194, "contact_nofext": 7819,
               "impulse": 5890},
    "ur5e": {"ID": 1150, "ID_nofext": 688, "FD": 2234, "FD_nofext": 1772, "M": 684, "h": 642,
             "dID_nofext": 6913, "dFD_nofext": 14455},
}
FUNCTIONS = {"ID": ("inverse_dynamics", {}), "ID_nofext": ("inverse_dynamics", {"fext": False}),
             "FD": ("forward_dynamics", {}), "FD_nofext": ("forward_dynamics", {"fext": False}),
             "M": ("mass_matrix", {}), "h": ("bias_force", {}),
             "dID_nofext": ("inverse_dynamics_derivatives", {"fext": False}),
             "dFD_nofext": ("forward_dynamics_derivatives", {"fext": False}),
             "A_G": ("centroidal_momentum_matrix", {}),
             "Jdot": ("jacobian_time_derivative", {"body": "FL_FOOT"}),
             "Jdot_local": ("jacobian_time_derivative",
                            {"body": "FL_FOOT", "reference_frame": "local"}),
             "contact_nofext": ("contact_dynamics", {"contacts": FEET, "fext": False}),
             "impulse": ("impulse_dynamics", {"contacts": FEET}),
             "Y": ("regressor", {})}


def _over_ceilings(robot, ceilings: dict) -> dict:
    """``{key: (size, ceiling)}`` for the functions of ``ceilings`` above theirs."""
    sizes = {key: robot.function(*FUNCTIONS[key][:1], **FUNCTIONS[key][1]).n_instructions()
             for key in ceilings}
    return {k: (sizes[k], ceilings[k]) for k in sizes if sizes[k] > ceilings[k]}


def test_every_shipped_robot_has_ceilings():
    assert set(CEILINGS) == set(casdyn.robot_names())


@pytest.mark.parametrize("name, floating_base",
                         [(name, False) for name in sorted(CEILINGS)]
                         + [(name, True) for name in sorted(FLOATING_CEILINGS)])
def test_graph_sizes_stay_under_their_ceilings(name, floating_base, shipped):
    robot = shipped(name, floating_base=floating_base)
    over = _over_ceilings(robot, (FLOATING_CEILINGS if floating_base else CEILINGS)[name])
    assert not over, f"{name}: (size, ceiling) {over}"


@pytest.mark.parametrize("name", ["ur5e", "torso_two_arms", "solo12"])
def test_variant_without_fext_has_no_external_force_work_left(name):
    """The ``fext=False`` variants are no larger than the same algorithms built with no
    external-force input at all (RNEA, and ABA or the factorised M, straight from the
    algorithms): nothing of the external-force part survives the substitution."""
    from casdyn.algorithms import dynamics

    robot = casdyn.load_robot(name)
    stages, model = robot._functions.stages, robot._functions.stages.reframed
    q, qd, x = (ca.SX.sym(n, robot.nq) for n in ("q", "qd", "x"))
    gravity = dynamics.gravity_acceleration(model)
    plain = {"inverse_dynamics": dynamics.rnea(stages.grouped, q, qd, x, gravity),
             "forward_dynamics": dynamics.forward_dynamics(stages.grouped, q, qd, x)}
    for function, expression in plain.items():
        reference = ca.Function("r", [q, qd, x], [expression], {"cse": True})
        lean = robot.function(function, fext=False)
        assert lean.n_instructions() <= reference.n_instructions(), function
        assert lean.n_instructions() < robot.function(function).n_instructions(), function


# example-robot-data's floating TALOS (talos_reduced): issue 10's target is half of adam's
# graphs (body-fixed representation: M 12,623, C qd + g 9,506, FD 19,856 instructions)
TALOS_CEILINGS = {"M": 5267, "h": 4193, "FD_nofext": 9925}


def test_floating_talos_graphs_stay_under_their_ceilings():
    from test_corpus import ROOT

    robot = casdyn.load_urdf((ROOT / "talos_data/robots/talos_reduced.urdf").read_text(),
                             floating_base=True)
    over = _over_ceilings(robot, TALOS_CEILINGS)
    assert not over, f"TALOS: (size, ceiling) {over}"
