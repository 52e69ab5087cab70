"""Build and run the native side-by-side timing (casdyn's compiled C vs Pinocchio's C++)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import casdyn

HERE = Path(__file__).resolve().parent
BUILD = HERE / "build"
# the compile definitions Pinocchio's CMake config exports to its users
DEFINES = ["-DBOOST_MPL_CFG_NO_PREPROCESSED_HEADERS", "-DBOOST_MPL_LIMIT_LIST_SIZE=30",
           "-DBOOST_MPL_LIMIT_VECTOR_SIZE=30", "-DBOOST_FUSION_INVOKE_MAX_ARITY=12"]
FUNCTIONS = [("inverse_dynamics", {"fext": False}), ("forward_dynamics", {"fext": False}),
             "mass_matrix"]
DERIVATIVES = [("inverse_dynamics_derivatives", {"fext": False}),
               ("forward_dynamics_derivatives", {"fext": False})]
SECOND = [("inverse_dynamics_second_derivatives", {"fext": False})]


def _prefix() -> Path:
    """The cmeel prefix where the pin and cmeel-eigen wheels keep headers and libraries."""
    import cmeel

    return Path(cmeel.__file__).resolve().parent.parent / "cmeel.prefix"


def harness(source_name: str = "native") -> Path:
    """Compile ``<source_name>.cpp`` once (about a minute: Pinocchio is header-heavy)."""
    BUILD.mkdir(exist_ok=True)
    exe = BUILD / source_name
    source = HERE / f"{source_name}.cpp"
    newest = max(source.stat().st_mtime, (HERE / "harness.hpp").stat().st_mtime)
    if exe.exists() and exe.stat().st_mtime > newest:
        return exe
    prefix = _prefix()
    command = ["g++", "-O3", "-DNDEBUG", "-std=c++17", "-march=native", "-w", *DEFINES,
               f"-I{prefix / 'include'}", f"-I{prefix / 'include' / 'eigen3'}", str(source),
               "-o", str(exe), f"-L{prefix / 'lib'}", "-lpinocchio_default",
               "-lboost_serialization", "-ldl", f"-Wl,-rpath,{prefix / 'lib'}"]
    print(f"compiling {source.name} against Pinocchio ...", file=sys.stderr, flush=True)
    subprocess.run(command, check=True)
    return exe


def run(name: str, urdf: str, rounds: int = 15, calls: int = 2000,
        derivatives: bool = False, floating_base: bool = False,
        regressor: bool = False, second: bool = False) -> dict[str, tuple]:
    """{quantity: (casdyn ns, Pinocchio ns, max |difference|)} for one model; with
    ``derivatives`` also dID and dFD (their C takes long to compile for long chains); with
    ``second`` the second-order d2ID instead (against ComputeRNEASecondOrderDerivatives);
    with ``regressor`` (a fixed-base chain) also the joint-torque regressor Y; with
    ``floating_base`` both on a free flyer (casdyn's inputs reordered, see native.cpp)."""
    exe = harness()
    directory = BUILD / name
    robot = casdyn.load_urdf(urdf, floating_base=floating_base)
    functions = FUNCTIONS + (DERIVATIVES if derivatives else []) + (
        SECOND if second else []) + (["regressor"] if regressor else [])
    library, model_file, order = _prepare(directory, robot, urdf, functions)
    mode = ("derivatives" if derivatives else "second" if second else
            "regressor" if regressor else "-")
    command = [str(exe), str(model_file), str(library), str(rounds), str(calls), mode,
               *([str(order)] if order else [])]
    return _results(command)


def run_task(name: str, urdf: str, contacts, rounds: int = 15,
             calls: int = 2000) -> dict[str, tuple]:
    """{"A_G" | "contact": (casdyn ns, Pinocchio ns, max |difference|)} on a floating base:
    the centroidal momentum matrix and contact dynamics (``contacts``: casdyn Contacts at
    frame origins) against computeCentroidalMap and constraintDynamics."""
    exe = harness("native_task")
    directory = BUILD / f"{name}-task"
    robot = casdyn.load_urdf(urdf, floating_base=True)
    # the harness finds the contact dynamics under the export key "contact_dynamics"
    held = ("contact_dynamics", "contact_dynamics", {"contacts": contacts, "fext": False})
    library, model_file, order = _prepare(directory, robot, urdf,
                                          ["centroidal_momentum_matrix", held])
    listed = directory / "contacts.txt"
    lines = [held[0]]
    lines += [f"{c.body} {3 if c.kind == 'point' else 6}" for c in contacts]
    listed.write_text("\n".join(lines) + "\n")
    return _results([str(exe), str(model_file), str(library), str(rounds), str(calls),
                     str(order), str(listed)])


def _prepare(directory: Path, robot, urdf: str, functions) -> tuple[Path, Path, Path | None]:
    """Export ``functions`` of ``robot`` (plain C names) and save Pinocchio's model of
    the same URDF: (library, model file, coordinate order file or None)."""
    import pinocchio as pin

    # prefix="": the harness looks the functions up by their plain names; casdyn's default
    # flags (by function size, see casdyn.codegen.build), built for this processor as Pinocchio is
    robot.export_c(directory, functions, prefix="", native=True)
    floating_base = robot.floating_base
    model = (pin.buildModelFromXML(urdf, pin.JointModelFreeFlyer()) if floating_base
             else pin.buildModelFromXML(urdf))
    if floating_base:  # the free flyer's position has infinite limits: random in [-1, 1]
        lower, upper = model.lowerPositionLimit, model.upperPositionLimit
        lower[:3], upper[:3] = -1.0, 1.0
        model.lowerPositionLimit, model.upperPositionLimit = lower, upper
    model.saveToBinary(str(directory / "model.bin"))
    order = None
    if floating_base:
        order = directory / "order.txt"
        order.write_text(" ".join(map(str, coordinate_order(robot, model))))
    return next(directory.glob("libcasdyn_*.so")), directory / "model.bin", order


def _results(command: list[str]) -> dict[str, tuple]:
    output = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    results = {}
    for line in output.splitlines():
        quantity, ours, theirs, diff = line.split()
        results[quantity] = (float(ours), float(theirs), float(diff))
    return results


def coordinate_order(robot, model) -> list[int]:
    """casdyn's q and v as indices into Pinocchio's (nq, then nv): joints by name, the free
    flyer's quaternion scalar first and twist angular first. Needs 1-dof joints with one
    coordinate in Pinocchio (revolute, prismatic), so that the map is a permutation."""
    order_q, order_v = [], []
    for joint in robot.model.coordinate_joints:
        pin_joint = model.joints[model.getJointId(
            "root_joint" if joint.name == "floating_base" else joint.name)]
        q, v = pin_joint.idx_q, pin_joint.idx_v
        if joint.type.name == "free":
            order_q += [q, q + 1, q + 2, q + 6, q + 3, q + 4, q + 5]
            order_v += [v + 3, v + 4, v + 5, v, v + 1, v + 2]
        else:
            assert pin_joint.nq == 1, f"{joint.name}: not a permutation of Pinocchio's q"
            order_q.append(q)
            order_v.append(v)
    return order_q + order_v
