"""The ``casdyn`` command: ``info``, ``export``, ``demo`` and ``show``."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from . import CasdynError, InputError, function_spec, load_robot, load_urdf, robot_names
from ._version import __version__
from .errors import suggest
from .functions import FUNCTION_NAMES
from .tree import RigidBodyTree
from .viewer import cli as show


def _load(source: str, floating_base: bool = False, joint_friction: bool = False
          ) -> RigidBodyTree:
    """A shipped robot name, or a path to a URDF file."""
    if source in robot_names():
        return load_robot(source, floating_base=floating_base, joint_friction=joint_friction)
    try:
        is_file = Path(source).is_file()
    except (OSError, ValueError):  # e.g. a name too long for the file system
        is_file = False
    if not is_file:
        shown = source if len(source) <= 80 else source[:80] + "..."
        raise InputError(
            f"{shown!r} is neither a shipped robot nor a URDF file; "
            f"{suggest(source, robot_names())}"
        )
    return load_urdf(source, floating_base=floating_base, joint_friction=joint_friction)


def info(robot: RigidBodyTree) -> str:
    """A readable description: joints with limits, bodies with masses."""
    lower, upper = robot.position_limits
    lines = [
        f"{robot.name}: {len(robot.joint_names)} joints (nq={robot.nq}, nv={robot.nv}), "
        f"{robot.n_bodies} bodies, total mass {robot.mass:.4g} kg, "
        f"gravity {robot.gravity.tolist()} m/s^2",
        robot.base_description,
        "",
        f"{'joint':<28} {'type':<11} {'q':>5} {'lower':>10} {'upper':>10}",
    ]
    model = robot.model
    terms = model.joint_friction or any(joint.armature for joint in model.joints)
    if terms:
        lines[-1] += f" {'damping':>9} {'friction':>9} {'armature':>9}"
    for joint in model.coordinate_joints:
        kind = "continuous" if joint.continuous else joint.type.name
        nq = joint.type.nq
        index = f"{joint.idx_q}" if nq == 1 else f"{joint.idx_q}:{joint.idx_q + nq}"
        lo, hi = lower[joint.idx_q], upper[joint.idx_q]
        limits = f"{lo:>10.4g} {hi:>10.4g}" if nq == 1 else f"{'':>10} {'':>10}"
        extra = (f" {joint.damping:>9.4g} {joint.friction:>9.4g} {joint.armature:>9.4g}"
                 if terms else "")
        lines.append(f"{joint.name:<28} {kind:<11} {index:>5} {limits}{extra}")
    for name, leader, multiplier, offset in robot.mimic_joints:
        lines.append(f"{name:<28} {'mimic':<11} {'':>5} q = {multiplier:.4g} * {leader} "
                     f"+ {offset:.4g}")
    if model.joint_friction:
        lines.append(f"joint friction on: tau += damping qd + friction tanh(qd / "
                     f"{model.friction_smoothing:g})")
    elif any(spec.damping or spec.friction for spec in model.description.joints):
        lines.append("the URDF gives <dynamics damping friction>; not used "
                     "(--joint-friction, or load_urdf(..., joint_friction=True))")
    lines += ["", f"{'body':<28} {'mass [kg]':>10}  moved by"]
    for body in robot.model.bodies:
        mover = robot.model.joints[body.joint].name if body.joint >= 0 else "(fixed to the base)"
        lines.append(f"{body.name:<28} {body.mass:>10.4g}  {mover}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="casdyn",
        description="Rigid-body dynamics of URDF robots as CasADi functions.",
    )
    parser.add_argument("--version", action="version", version=f"casdyn {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    p_info = commands.add_parser("info", help="bodies, joints, limits and mass of a robot")
    shipped = ", ".join(robot_names())
    p_info.add_argument("robot", help=f"a shipped robot ({shipped}) or a URDF path")
    floating = {"action": "store_true",
                "help": "free root link: a 6-dof joint 'floating_base' from the world"}
    p_info.add_argument("--floating-base", **floating)
    friction = {"action": "store_true",
                "help": "the joints' <dynamics damping friction> act in every dynamics function"}
    p_info.add_argument("--joint-friction", **friction)
    p_export = commands.add_parser(
        "export", help="generate C for a robot's functions, compile it and check it loads",
        epilog=function_spec.SYNTAX, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p_export.add_argument("robot", help="a shipped robot name or a URDF path")
    p_export.add_argument("--out", required=True, help="directory for the .c, .h and .so files")
    p_export.add_argument(
        "--functions", nargs="+", metavar="[KEY=]NAME[:BODY][:OPTION=VALUE]",
        help=f"which functions (default: all but the contact ones); names: "
        f"{', '.join(FUNCTION_NAMES)}; the syntax is below",
    )
    p_export.add_argument("--prefix", help="prefix of the C symbols, a C identifier such as "
                          "left_arm (default: the robot name)")
    p_export.add_argument("--no-compile", action="store_true", help="write the C source only")
    p_export.add_argument("--floating-base", **floating)
    p_export.add_argument("--joint-friction", **friction)
    shown = p_export.add_mutually_exclusive_group()
    shown.add_argument("--quiet", action="store_true",
                       help="no progress on stderr (default: shown on a terminal after 1 s)")
    shown.add_argument("--progress", action="store_true",
                       help="progress on stderr even when it is not a terminal")
    p_demo = commands.add_parser("demo", help="the main demo: dynamics of a shipped robot")
    p_demo.add_argument("robot", nargs="?", default="ur5e", help="a shipped robot (default ur5e)")
    show.add_parser(commands, floating)
    args = parser.parse_args(argv)
    try:
        if args.command == "info":
            print(info(_load(args.robot, args.floating_base, args.joint_friction)))
        elif args.command == "export":
            robot = _load(args.robot, args.floating_base, args.joint_friction)
            functions = None
            if args.functions:
                parsed = [function_spec.parse(f) for f in args.functions]
                functions = [(name, opts) if key is None else (key, name, opts)
                             for key, name, opts in parsed]
            progress = False if args.quiet else True if args.progress else None
            exported = robot.export_c(args.out, functions, compile=not args.no_compile,
                                      prefix=args.prefix, progress=progress)
            what = "generated" if args.no_compile else "compiled and loaded"
            print(f"{what} {len(exported)} functions of {robot.name} in {args.out}:")
            for function in exported.values():
                print(f"  {function}")
        elif args.command == "show":
            return show.run(args, _load(args.robot, args.floating_base))
        else:
            from .demo import run

            run(args.robot)
    except BrokenPipeError:  # the reader went away (e.g. `casdyn demo | head`): stop quietly
        sys.stderr = open(os.devnull, "w")  # noqa: SIM115  (silence the flush at exit)
        return 0
    except (CasdynError, OSError) as error:
        message = " ".join(str(error).split()) or type(error).__name__
        print(f"casdyn: error: {message}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
