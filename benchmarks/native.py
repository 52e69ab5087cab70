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


def _prefix() -> Path:
    """The cmeel prefix where the pin and cmeel-eigen wheels keep headers and libraries."""
    import cmeel

    return Path(cmeel.__file__).resolve().parent.parent / "cmeel.prefix"


def harness() -> Path:
    """Compile native.cpp once (about a minute: Pinocchio is header-heavy)."""
    BUILD.mkdir(exist_ok=True)
    exe = BUILD / "native"
    source = HERE / "native.cpp"
    if exe.exists() and exe.stat().st_mtime > source.stat().st_mtime:
        return exe
    prefix = _prefix()
    command = ["g++", "-O3", "-DNDEBUG", "-std=c++17", "-march=native", "-w", *DEFINES,
               f"-I{prefix / 'include'}", f"-I{prefix / 'include' / 'eigen3'}", str(source),
               "-o", str(exe), f"-L{prefix / 'lib'}", "-lpinocchio_default",
               "-lboost_serialization", "-ldl", f"-Wl,-rpath,{prefix / 'lib'}"]
    print("compiling the native harness against Pinocchio ...", file=sys.stderr, flush=True)
    subprocess.run(command, check=True)
    return exe


def run(name: str, urdf: str, rounds: int = 15, calls: int = 2000,
        derivatives: bool = False) -> dict[str, tuple]:
    """{quantity: (casdyn ns, Pinocchio ns, max |difference|)} for one model; with
    ``derivatives`` also dID and dFD (their C takes long to compile for long chains)."""
    import pinocchio as pin

    exe = harness()
    directory = BUILD / name
    robot = casdyn.load_urdf(urdf)
    functions = FUNCTIONS + (DERIVATIVES if derivatives else [])
    # prefix="": the harness looks the functions up by their plain names
    robot.export_c(directory, functions, flags=("-O3", "-march=native", "-fPIC", "-shared"),
                   prefix="")
    pin.buildModelFromXML(urdf).saveToBinary(str(directory / "model.bin"))
    library = next(directory.glob("libcasdyn_*.so"))
    command = [str(exe), str(directory / "model.bin"), str(library), str(rounds), str(calls)]
    output = subprocess.run(command + (["derivatives"] if derivatives else []), check=True,
                            capture_output=True, text=True).stdout
    results = {}
    for line in output.splitlines():
        quantity, ours, theirs, diff = line.split()
        results[quantity] = (float(ours), float(theirs), float(diff))
    return results
