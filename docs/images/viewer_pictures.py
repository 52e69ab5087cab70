"""The viewer pictures of the documentation: solo12 standing and the UR5 arm, drawn with
their meshes from example-robot-data (the UR5's are DAE: pycollada is needed), rendered by
headless Chromium from a saved recording. Run from the repository root:

    python docs/images/viewer_pictures.py
"""

import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[2] / "tests"))

from browser import Browser, save_png  # noqa: E402

import casdyn  # noqa: E402

HERE = Path(__file__).parent


def _share() -> Path:
    """Where the example-robot-data package puts its models."""
    import cmeel

    return Path(cmeel.__file__).parent.parent / "cmeel.prefix" / "share"


def _by_name(robot, values: dict):
    """A configuration from joint values by name (the rest at home)."""
    q = robot.home_configuration()
    joints = {joint.name: joint for joint in robot.model.coordinate_joints}
    for name, value in values.items():
        q[joints[name].idx_q] = value
    return q


def picture(robot, q, out: Path, width=640, height=420) -> None:
    with tempfile.TemporaryDirectory() as folder, robot.show(q) as viewer:
        page = viewer.save(Path(folder) / "scene.html")
        with Browser(width, height) as browser:
            browser.open(page.as_uri())
            browser.settled()
            browser.click(288, 81)  # dismiss the "software WebGL" notice
            save_png(browser.settled(), out)
    print(out, out.stat().st_size, "bytes")


def main() -> None:
    share = _share()
    robots = share / "example-robot-data" / "robots"
    solo = casdyn.load_urdf(robots / "solo_description" / "robots" / "solo12.urdf",
                            floating_base=True, package_dirs=[share])
    shipped = casdyn.load_robot("solo12", floating_base=True)
    standing = shipped.named_configurations["standing"]
    values = {joint.name: standing[joint.idx_q] for joint in shipped.model.coordinate_joints
              if joint.name != "floating_base"}
    q = _by_name(solo, values)
    q[:7] = standing[:7]
    picture(solo, q, HERE / "viewer_solo12.png")
    ur5 = casdyn.load_urdf(robots / "ur_description" / "urdf" / "ur5_robot.urdf",
                           package_dirs=[share])
    q = _by_name(ur5, {"shoulder_pan_joint": 0.6, "shoulder_lift_joint": -1.1,
                       "elbow_joint": 1.6, "wrist_1_joint": -2.0, "wrist_2_joint": -1.57})
    picture(ur5, q, HERE / "viewer_ur5.png")


if __name__ == "__main__":
    main()
