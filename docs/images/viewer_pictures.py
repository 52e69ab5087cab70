"""The viewer pictures of the documentation, rendered by headless Chromium from saved
recordings: solo12 standing (its frames, the weight shared by the four feet as contact forces
in their friction cones, the centre of mass over its ground projection) and the UR5e (its
collision capsules). Run from the repository root:

    python docs/images/viewer_pictures.py
"""

import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parents[2] / "tests"))

from browser import Browser, save_png

import casdyn

HERE = Path(__file__).parent
FEET = ("FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT")


def picture(viewer, out: Path, width=720, height=460) -> None:
    with tempfile.TemporaryDirectory() as folder:
        page = viewer.save(Path(folder) / "scene.html")
        with Browser(width, height) as browser:
            browser.open(page.as_uri())
            browser.settled()
            browser.dismiss_notifications()  # the notice about software WebGL
            save_png(browser.settled(), out)
    print(out, out.stat().st_size, "bytes")


def main() -> None:
    solo = casdyn.load_robot("solo12", floating_base=True)
    q = solo.named_configurations["standing"]
    forces = np.zeros((1, 4, 3))
    forces[0, :, 2] = solo.mass * 9.81 / 4
    with solo.show(q) as viewer:
        viewer.play([0.0], q[None], forces, FEET, com=True)
        picture(viewer, HERE / "viewer_solo12.png")
    ur5e = casdyn.load_robot("ur5e")
    q = np.array([0.6, -1.1, 1.6, -2.0, -1.57, 0.0])
    with ur5e.show(q) as viewer:
        picture(viewer, HERE / "viewer_ur5e.png")


if __name__ == "__main__":
    main()
