"""``casdyn show``: a robot (and a trajectory file) in the browser until interrupted."""

from __future__ import annotations

import argparse
import signal
import sys
import threading
import webbrowser

import numpy as np

from .viewer import GEOMETRY_KINDS


def add_parser(commands, floating: dict) -> None:
    """Add the ``show`` subcommand to ``commands`` (an argparse subparsers object)."""
    parser = commands.add_parser(
        "show", help="see a robot (and play a trajectory) in the browser; needs casdyn[viewer]",
        description="Serve a 3D view of the robot on http://127.0.0.1:PORT (printed on stdout "
        "once the page can be loaded) until interrupted (Ctrl-C).")
    parser.add_argument("robot", help="a shipped robot name or a URDF path")
    parser.add_argument("--floating-base", **floating)
    parser.add_argument("--trajectory", metavar="FILE.npz",
                        help="play t (N,), q (N, nq) and, if present, forces (N, nc, 3) on "
                        "contacts (nc body names), with the centre of mass")
    parser.add_argument("--port", type=int, help="the port to serve on (default: a free one)")
    parser.add_argument("--no-browser", action="store_true", help="do not open a browser")
    parser.add_argument("--save", metavar="FILE",
                        help="write a recording (.html: one self-contained page; .viser) and "
                        "exit instead of serving")
    parser.add_argument("--geometry", choices=GEOMETRY_KINDS, default="visual",
                        help="what to draw (default: visual, else collision, else frames)")


def run(args: argparse.Namespace, robot) -> int:
    """Serve ``robot`` as ``args`` ask until interrupted (SIGINT or SIGTERM)."""
    from . import trajectory

    data = trajectory.load(args.trajectory) if args.trajectory else None
    # the first sample where q has rows; any other shape is play's error, which names it
    first = data["q"][0] if data is not None and np.ndim(data["q"]) == 2 and len(
        data["q"]) else None
    viewer = robot.show(first, geometry=args.geometry, port=args.port)
    stop = threading.Event()
    try:
        if data is not None:
            viewer.play(data["t"], data["q"], data.get("forces"), data.get("contacts"),
                        com=True)
        if args.save:
            print(viewer.save(args.save), flush=True)
            return 0
        # Ctrl-C and SIGTERM stop the server. SIGINT gets a handler of its own: a process
        # started in the background of a script inherits it ignored, and Python then never
        # raises KeyboardInterrupt, so Ctrl-C (or a supervisor's SIGINT) would not stop it
        previous = {number: signal.signal(number, lambda *_: stop.set())
                    for number in (signal.SIGINT, signal.SIGTERM)}
        try:
            print(viewer.url, flush=True)
            if not args.no_browser:
                webbrowser.open(viewer.url)
            while not stop.wait(0.5):
                pass
        finally:
            for number, handler in previous.items():
                signal.signal(number, handler)
        print("casdyn show: stopped", file=sys.stderr)
        return 0
    finally:
        viewer.close()
