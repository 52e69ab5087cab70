"""Collision distances of a 7-dof arm, compiled: casdyn's C (kinematics, every pair's signed
distance, and its Jacobian d/dq) against coal's ``distance`` over the same pairs at the same
poses, timed side by side in one native process (benchmarks/geometry_native.cpp).

    PYTHONPATH=. python benchmarks/geometry.py [--robot kuka_iiwa14|panda] [--configs 200]
        [--calls 20000]

coal is handed the poses (it has no kinematics); casdyn's time includes computing them from q.
Times are the fastest of 15 rounds (20000 calls each; coal 5000), per call.
"""

from __future__ import annotations

import argparse
import json
import subprocess
from pathlib import Path

import casadi as ca
import numpy as np

import casdyn
from casdyn import geometry as g
from casdyn.codegen import externals

HERE = Path(__file__).resolve().parent
BUILD = HERE / "build" / "geometry"
LAMP = g.Obstacle("lamp", g.Sphere(0.1), np.array(
    [[1, 0, 0, 0.4], [0, 1, 0, 0.4], [0, 0, 1, 0.8], [0, 0, 0, 1.0]]))
SCENES = {  # two obstacles each
    "box": (g.Obstacle("shelf", g.Box((0.2, 0.4, 0.6)), np.array(
        [[1, 0, 0, 0.55], [0, 1, 0, 0.0], [0, 0, 1, 0.3], [0, 0, 0, 1.0]])), LAMP),
    "capsule": (g.Obstacle("pole", g.Capsule(0.05, 1.0), np.array(
        [[1, 0, 0, 0.5], [0, 1, 0, 0.0], [0, 0, 1, 0.5], [0, 0, 0, 1.0]])), LAMP),
}
OBSTACLES = SCENES["box"]


def _panda():
    """example-robot-data's Panda (as the cmeel wheel installs it beside Pinocchio) with its
    meshes and SRDF."""
    import pinocchio

    share = Path(pinocchio.__file__).parents[4] / "share"
    panda = share / "example-robot-data/robots/panda_description"
    return casdyn.load_urdf(panda / "urdf/panda.urdf", package_dirs=[share],
                            srdf=panda / "srdf/panda.srdf")


def _prefix() -> Path:
    import cmeel

    return Path(cmeel.__file__).resolve().parent.parent / "cmeel.prefix"


def _eigen() -> Path:
    """Eigen's headers: cmeel-eigen's, else the copy the casadi wheel carries."""
    mine = _prefix() / "include" / "eigen3"
    return mine if (mine / "Eigen").is_dir() else Path(ca.__file__).parent / "include/eigen3"


def _shape_line(shape) -> str:
    if isinstance(shape, g.Sphere):
        return f"sphere {shape.radius!r}"
    if isinstance(shape, g.Capsule):
        return f"capsule {shape.radius!r} {shape.length!r}"
    if isinstance(shape, g.Box):
        return "box " + " ".join(repr(s) for s in shape.size)
    if isinstance(shape, g.ConvexMesh):
        return f"convex {len(shape.vertices)} " + " ".join(
            f"{x:.17g}" for x in np.asarray(shape.vertices).ravel())
    raise SystemExit(f"the harness reads spheres, capsules, boxes and convex meshes, not {shape}")


def write_case(robot, obstacles, n_configs: int, path: Path) -> int:
    """The geometries, the pairs (indices) and random configurations with every geometry's
    pose, for the harness; returns the number of pairs."""
    geometry = list(robot.collision_geometry)
    index = {item.name: i for i, item in enumerate(geometry)}
    pairs = [(index[a], index[b]) for a, b in robot.collision_pairs]
    pairs += [(len(geometry) + k, i) for k in range(len(obstacles)) for i in range(len(geometry))]
    shapes = [item.shape for item in geometry] + [o.shape for o in obstacles]
    rng = np.random.default_rng(0)
    lines = [f"{len(shapes)} {len(pairs)} {n_configs} {robot.nq} {robot.nv}"]
    lines += [_shape_line(s) for s in shapes] + [f"{a} {b}" for a, b in pairs]
    for _ in range(n_configs):
        q = robot.random_configuration(rng)
        lines.append(" ".join(f"{x:.17g}" for x in q))
        poses = [robot.get_transform(q, item.body) @ item.pose for item in geometry]
        poses += [o.pose for o in obstacles]
        lines += [" ".join(f"{x:.17g}" for x in pose[:3].ravel()) for pose in poses]
    path.write_text("\n".join(lines) + "\n")
    return len(pairs)


def build(robot, obstacles, directory: Path) -> Path:
    """casdyn's C of (q) -> d and (q) -> (d, J) (through closest points, and by AD), and the
    harness linked against coal."""
    directory.mkdir(parents=True, exist_ok=True)
    functions = []
    for name, jacobian in (("collision_distances", False), ("collision_jacobian", True),
                           ("collision_jacobian_ad", "ad")):
        f = robot.function("collision_distances", obstacles=obstacles, jacobian=jacobian)
        functions.append(ca.Function(name, f.sx_in(), f.call(f.sx_in())))
    generator = ca.CodeGenerator("casdyn_geometry.c", {"with_header": True})
    for f in functions:
        generator.add(f)
    generator.generate(str(directory) + "/")
    source = directory / "casdyn_geometry.c"  # with the convex-mesh routine it calls, if any
    source.write_text(source.read_text() + externals.sources_for(functions))
    sizes = [f"-D{f.name()}_SZ_{k.upper()}={getattr(f, 'sz_' + k)()}"
             for f in functions for k in ("w", "iw")]
    if max(max(f.sz_arg(), f.sz_res()) for f in functions) > 64:
        raise SystemExit("the harness passes 64 argument and result slots")
    prefix = _prefix()
    subprocess.run(["gcc", "-O3", "-march=native", "-c", "casdyn_geometry.c", "-o",
                    "casdyn_geometry.o"], cwd=directory, check=True)
    exe = directory / "geometry_native"
    subprocess.run(["g++", "-O3", "-DNDEBUG", "-std=c++17", "-march=native", "-w", *sizes,
                    f"-I{directory}", f"-I{prefix / 'include'}", f"-I{_eigen()}",
                    str(HERE / "geometry_native.cpp"), str(directory / "casdyn_geometry.o"),
                    "-o", str(exe), f"-L{prefix / 'lib'}", "-lcoal",
                    f"-Wl,-rpath,{prefix / 'lib'}"], check=True)
    return exe


def main(argv=None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--robot", default="kuka_iiwa14",
                        help="a shipped robot, or 'panda': example-robot-data's Panda with its "
                        "own meshes (convex hulls) and SRDF")
    parser.add_argument("--configs", type=int, default=200)
    parser.add_argument("--calls", type=int, default=20000, help="calls per round")
    args = parser.parse_args(argv)
    robot = _panda() if args.robot == "panda" else casdyn.load_robot(args.robot)
    results = []
    for scene, obstacles in SCENES.items():
        directory = BUILD / args.robot / scene
        exe = build(robot, obstacles, directory)
        write_case(robot, obstacles, args.configs, directory / "case.txt")
        out = json.loads(subprocess.run([str(exe), str(directory / "case.txt"),
                                         str(args.calls)], check=True,
                                        capture_output=True, text=True).stdout)
        out.update(robot=args.robot, obstacles=[o.name for o in obstacles],
                   coal_over_casdyn_d=round(out["coal_ns"] / out["casdyn_d_ns"], 2),
                   coal_over_casdyn_d_J=round(out["coal_ns"] / out["casdyn_d_J_ns"], 2))
        print(json.dumps(out), flush=True)
        results.append(out)
    return results


if __name__ == "__main__":
    main()
