"""load_mjcf (SPEC "MJCF, ball joints and loops") against MuJoCo itself: mass matrix
(``mj_fullM``, rotor inertias included), bias forces and inverse dynamics (``mj_rne``), body
and site poses (``xpos``, ``xmat``) and Jacobians (``mj_jac``, ``mj_jacSite``) at random
states, on hand-written models, the shipped Ant and every MJCF model that the installed
gymnasium, dm_control and robosuite packages ship (within a time budget)."""

from __future__ import annotations

import glob
import importlib.util
import os
import sys
import time
import warnings
from pathlib import Path

import mujoco
import numpy as np
import pytest
from conftest import assert_close
from mujoco_reference import MuJoCo, largest_errors, random_qpos

import casdyn
from casdyn.model.shipped import robot_mjcf

EXACT = 1e-9

# every joint kind, hinge ref and range, armature, a slide with ref, a ball off its body's
# origin, three joints in one body at different anchors, an unnamed joint, sites (one named
# as its body), body and inertial frames turned, gravity not along z
ARM = """
<mujoco model="arm">
  <compiler angle="degree"/>
  <option gravity="0.3 -0.2 -9.81"/>
  <worldbody>
    <site name="origin" pos="0.1 0 0"/>
    <body name="base" pos="0.1 0.2 0.3" quat="0.9 0.1 0.2 0.3">
      <joint name="yaw" axis="0.3 1 0.2" pos="0.05 0 0.1" ref="20" range="-90 90"
             limited="true" armature="0.1"/>
      <joint name="lift" type="slide" axis="1 0.2 0" pos="0 0.1 0" ref="0.3" armature="0.2"/>
      <joint name="roll" axis="1 0 0" pos="0 0.03 -0.02" ref="-30"/>
      <geom type="capsule" fromto="0 0 0 0.3 0.1 0" size="0.05"/>
      <site name="tip" pos="0.3 0.1 0" euler="10 0 30"/>
      <body name="upper" pos="0.3 0 0" euler="10 20 30">
        <joint type="ball" pos="0.02 0.03 0"/>
        <geom type="box" size="0.1 0.05 0.02" pos="0.1 0 0" euler="0 30 0"/>
        <site name="upper" pos="0.2 0 0"/>
        <body name="hand" pos="0.2 0 0">
          <inertial pos="0.05 0.01 0" quat="0.8 0.2 0.5 0.1" mass="0.7"
                    diaginertia="0.01 0.02 0.025"/>
          <joint name="wrist" axis="0 0 1"/>
        </body>
      </body>
    </body>
  </worldbody>
</mujoco>
"""

TWO_FREE_BODIES = """
<mujoco>
  <worldbody>
    <body name="a" pos="0 0 1"><freejoint name="a"/><geom size="0.1"/>
      <body name="a_arm" pos="0.2 0 0"><joint axis="0 1 0"/><geom size="0.05"/></body>
    </body>
    <body name="b" pos="1 0 1" quat="0 1 0 0"><freejoint/><geom type="box" size="0.1 0.2 0.3"/>
    </body>
  </worldbody>
</mujoco>
"""


def _load(source, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", casdyn.ModelWarning)
        return casdyn.load_mjcf(source, **options)


def _agrees(robot, m, seeds=(0, 1)):
    for seed in seeds:
        errors = largest_errors(robot, m, seed)
        assert max(errors.values()) < EXACT, errors


def test_a_model_with_every_joint_kind_agrees_with_mujoco():
    robot = _load(ARM)
    m = mujoco.MjModel.from_xml_string(ARM)
    _agrees(robot, m)
    assert robot.nq == m.nq and robot.nv == m.nv
    assert robot.joint_names == ("yaw", "lift", "roll", "upper_joint0", "wrist")
    for name in ("origin", "tip", "upper_site", "base", "upper", "hand"):
        assert name in robot.body_names
    assert_close(robot.gravity, [0.3, -0.2, -9.81])
    lower, upper = robot.position_limits
    assert_close([lower[0], upper[0]], [-np.pi / 2, np.pi / 2])


def test_q_equal_to_ref_is_the_modelled_pose():
    """MuJoCo's ``qpos0`` (the refs) puts every body where the file does."""
    robot = _load(ARM)
    m = mujoco.MjModel.from_xml_string(ARM)
    d = mujoco.MjData(m)
    mujoco.mj_kinematics(m, d)
    T = robot.get_transform(m.qpos0, "hand")
    assert_close(T[:3, 3], d.xpos[m.body("hand").id])
    assert_close(T[:3, :3], d.xmat[m.body("hand").id].reshape(3, 3))


def test_the_sources_a_path_a_string_and_a_compiled_model_are_the_same(tmp_path):
    path = tmp_path / "arm.xml"
    path.write_text(ARM)
    m = mujoco.MjModel.from_xml_string(ARM)
    q = random_qpos(m, np.random.default_rng(3))
    expected = _load(ARM).mass_matrix(q)
    for source in (path, str(path), m):
        assert_close(_load(source).mass_matrix(q), expected)


def test_the_shipped_ant_is_floating_and_agrees_with_mujoco():
    text = robot_mjcf("ant")
    robot = _load(text)
    m = mujoco.MjModel.from_xml_string(text)
    assert robot.floating_base and robot.model.joints[0].type.name == "free"
    assert robot.body_names[0] == "torso" and robot.nq == m.nq
    _agrees(robot, m)


def test_floating_base_false_welds_the_free_joint_at_its_modelled_pose():
    text = robot_mjcf("ant")
    robot = _load(text, floating_base=False)
    m = mujoco.MjModel.from_xml_string(text)
    assert not robot.floating_base and robot.nv == m.nv - 6
    T = robot.get_transform(m.qpos0[7:], "torso")
    assert_close(T[:3, 3], [0, 0, 0.75])
    welded = text.replace('type="free"', 'type="hinge" axis="0 0 1" range="0 0"')
    reference = mujoco.MjModel.from_xml_string(welded)  # the same bodies, one joint at 0
    d = mujoco.MjData(reference)
    d.qpos[1:] = m.qpos0[7:]
    mujoco.mj_forward(reference, d)
    M = np.zeros((reference.nv, reference.nv))
    mujoco.mj_fullM(reference, d, M)
    assert_close(robot.mass_matrix(m.qpos0[7:]), M[1:, 1:])


def test_floating_base_true_frees_a_welded_root_body():
    text = ARM.replace('<site name="origin" pos="0.1 0 0"/>', "")
    text = text.replace('<body name="base" pos="0.1 0.2 0.3" quat="0.9 0.1 0.2 0.3">',
                        '<body name="base" pos="0.1 0.2 0.3" quat="0.9 0.1 0.2 0.3">'
                        '<freejoint name="free"/><geom size="0.1"/><body name="inner">')
    text = text.replace("</worldbody>", "</body></worldbody>")
    with_free = mujoco.MjModel.from_xml_string(text)
    robot = _load(text.replace('<freejoint name="free"/>', ""), floating_base=True)
    assert robot.floating_base and robot.nv == with_free.nv
    _agrees(robot, with_free, seeds=(4,))
    with pytest.raises(casdyn.ModelError, match="floating_base=True"):
        _load(ARM, floating_base=True)  # a site and a body with joints in the worldbody


def test_free_bodies_on_a_fixed_world_keep_their_free_joints():
    robot = _load(TWO_FREE_BODIES)
    m = mujoco.MjModel.from_xml_string(TWO_FREE_BODIES)
    assert not robot.floating_base and robot.joint_names[0] == "a"
    assert [j.type.name for j in robot.model.joints] == ["free", "revolute", "free"]
    _agrees(robot, m)


def test_damping_and_frictionloss_are_the_joint_friction():
    text = ARM.replace('armature="0.1"', 'armature="0.1" damping="0.7" frictionloss="0.4"')
    robot = _load(text, joint_friction=True)
    plain = _load(text)
    m = mujoco.MjModel.from_xml_string(text)
    rng = np.random.default_rng(2)
    q, qd, qdd = random_qpos(m, rng), *rng.normal(size=(2, m.nv))
    passive = robot.inverse_dynamics(q, qd, qdd) - plain.inverse_dynamics(q, qd, qdd)
    ref = MuJoCo(m, plain).at(q, qd)
    coulomb = np.zeros(m.nv)
    coulomb[0] = 0.4 * np.tanh(qd[0] / 1e-3)
    assert_close(passive, ref.damping() + coulomb)
    assert ref.damping()[0] != 0


BALL_AND_FREE = """
<mujoco>
  <option gravity="0.2 -0.1 -9.81"/>
  <worldbody>
    <body name="torso" pos="0 0 1">
      <joint type="free" name="root" armature="0.3" damping="0.4"/><geom size="0.1" mass="2"/>
      <body name="arm" pos="0.2 0 0">
        <joint name="shoulder" type="ball" pos="0.02 0 0.01" armature="0.05" damping="0.7"
               frictionloss="0.2"/>
        <geom type="capsule" fromto="0 0 0 0.3 0.1 0" size="0.04"/>
        <body name="hand" pos="0.3 0.1 0">
          <joint name="wrist" axis="0 1 0" armature="0.02" damping="0.1"/><geom size="0.05"/>
        </body>
      </body>
    </body>
    <body name="box" pos="1 0 1">
      <joint type="free" armature="0.1" damping="0.2"/><geom type="box" size="0.1 0.2 0.3"/>
    </body>
  </worldbody>
</mujoco>
"""


ONE_FREE_BODY = BALL_AND_FREE[: BALL_AND_FREE.index('    <body name="box"')] \
    + "  </worldbody>\n</mujoco>"


@pytest.mark.parametrize("text", [BALL_AND_FREE, ONE_FREE_BODY], ids=["fixed", "floating"])
def test_armature_and_damping_of_ball_and_free_joints_agree_with_mujoco(text):
    """Rotor inertia on every dof of a ball and a free joint (the floating base's and
    another's): ``mj_fullM`` and ``mj_rne`` with ``armature qacc`` (MuJoCo's qacc: for a free
    joint the rate of the world-frame velocity); damping as ``-qfrc_damper``, a ball's
    frictionloss as the smooth friction on each of its rates; forward dynamics and the
    derivatives consistent with them."""
    m = mujoco.MjModel.from_xml_string(text)
    plain, robot = _load(text), _load(text, joint_friction=True)
    assert robot.floating_base == (text == ONE_FREE_BODY)
    assert robot.model.joints[0].armature == 0.3 and robot.model.joints[0].damping == 0.4
    _agrees(plain, m, seeds=(0, 1, 2))
    rng = np.random.default_rng(4)
    q, qd, qdd = random_qpos(m, rng), *rng.normal(size=(2, m.nv))
    passive = robot.inverse_dynamics(q, qd, qdd) - plain.inverse_dynamics(q, qd, qdd)
    coulomb = np.zeros(m.nv)
    ball = slice(6, 9)
    coulomb[ball] = 0.2 * np.tanh(qd[ball] / 1e-3)
    assert_close(passive, MuJoCo(m, plain).at(q, qd).damping() + coulomb)
    for model in (plain, robot):
        tau = model.inverse_dynamics(q, qd, qdd)
        assert_close(model.forward_dynamics(q, qd, tau), qdd)
        _, dqd, M = model.inverse_dynamics_derivatives(q, qd, qdd)
        assert_close(M, model.mass_matrix(q))
        h = 1e-6
        columns = [(model.inverse_dynamics(q, qd + h * e, qdd)
                    - model.inverse_dynamics(q, qd - h * e, qdd)) / (2 * h)
                   for e in np.eye(m.nv)]
        assert_close(dqd, np.column_stack(columns), 1e-6)
    with pytest.warns(casdyn.ModelWarning) as caught:
        casdyn.load_mjcf(text.replace('damping="0.4"', 'frictionloss="1"'))
    messages = [str(w.message) for w in caught]
    assert any("frictionloss on a free joint" in m for m in messages)
    assert any("joint damping of 'shoulder'" in m for m in messages)  # left out, named


def test_what_casdyn_does_not_model_is_named_in_a_warning():
    text = ARM.replace('<joint type="ball" pos="0.02 0.03 0"/>',
                       '<joint type="ball" pos="0.02 0.03 0" damping="1"/>')
    text = text.replace('<joint name="wrist" axis="0 0 1"/>',
                        '<joint name="wrist" axis="0 0 1" stiffness="3"/>')
    text = text.replace("</worldbody>", """</worldbody>
  <tendon><fixed name="t"><joint joint="yaw" coef="1"/><joint joint="roll" coef="-1"/></fixed>
  </tendon>
  <actuator><motor joint="yaw"/></actuator>
  <equality><connect body1="hand" body2="world" anchor="0 0 0"/>
    <joint joint1="yaw" joint2="roll"/></equality>""")
    with pytest.warns(casdyn.ModelWarning) as record:
        casdyn.load_mjcf(text)
    said = " ".join(str(w.message) for w in record)
    for what in ("tendon", "actuator", "1 equality constraint(s) on joints", "softness",
                 "stiffness of 'wrist'"):
        assert what in said, (what, said)
    assert "damping of 'upper_joint0'" in said  # left out without joint_friction=True
    with pytest.warns(casdyn.ModelWarning) as record:
        casdyn.load_mjcf(text, joint_friction=True)
    assert "upper_joint0" not in " ".join(str(w.message) for w in record)  # modelled


DAMPED = """<mujoco><worldbody>
  <body name="torso" pos="0 0 1"><freejoint name="root"/><geom size="0.1"/>
    <body name="arm"><joint name="hinge" axis="0 1 0" damping="3" frictionloss="0.5"/>
      <geom type="capsule" fromto="0 0 0 0.5 0 0" size="0.05" mass="1"/>
      <body name="slider"><joint name="slide" type="slide" damping="1"/><geom size="0.05"/>
        <body name="tip"><joint name="plain" axis="1 0 0"/><geom size="0.02"/></body>
      </body></body></body></worldbody></mujoco>"""


def test_damping_and_frictionloss_left_out_are_named_with_their_joints():
    with pytest.warns(casdyn.ModelWarning) as record:
        casdyn.load_mjcf(DAMPED)
    said = " ".join(str(w.message) for w in record)
    assert ("casdyn does not model: joint damping of 'hinge', 'slide' and frictionloss of "
            "'hinge' (load_mjcf(..., joint_friction=True)") in said, said
    assert "'plain'" not in said and "'root'" not in said
    base = DAMPED.replace('<freejoint name="root"/>',
                          '<joint name="root" type="free" damping="2"/>')
    with pytest.warns(casdyn.ModelWarning, match="joint damping of 'floating_base', 'hinge'"):
        casdyn.load_mjcf(base)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        casdyn.load_mjcf(base, joint_friction=True)
    assert not any("damping" in str(w.message) for w in record)


def test_nearly_parallel_joint_axes_keep_every_digit():
    """Two hinges whose axes are antiparallel but for 1e-6 rad (as in dm_control's fruit
    fly): the frames chosen for sparser graphs must not move inertias to the far foot of
    their common normal (it put M 2e-4 off)."""
    text = """<mujoco><worldbody><body name="a">
      <joint name="j1" axis="4e-7 -1 4e-7"/><geom size="0.1" pos="0.2 -0.006 0" mass="20"/>
      <body name="b" pos="0.37 0 -0.05"><joint name="j2" axis="1.1e-7 1 -6e-7"/>
        <geom size="0.1" pos="0.2 0 0" mass="3"/>
        <body name="c" pos="0.1 0 0"><joint name="j3" axis="0 1 0"/><geom size="0.1"/>
        </body></body></body></worldbody></mujoco>"""
    _agrees(_load(text), mujoco.MjModel.from_xml_string(text))


@pytest.mark.parametrize("source, error, message", [
    ("no/such/file.xml", casdyn.InputError, "not found"),
    ("<mujoco><worldbody><body><joint type='hinge'/></body></mujoco>", casdyn.ModelError,
     "MuJoCo could not compile"),
    (42, casdyn.InputError, "got int"),
])
def test_bad_sources_are_clear_errors(source, error, message):
    with pytest.raises(error, match=message):
        casdyn.load_mjcf(source)


def test_without_mujoco_the_error_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "mujoco", None)
    with pytest.raises(casdyn.CasdynError, match="pip install mujoco"):
        casdyn.load_mjcf(ARM)


# --- the MJCF models that ship inside PyPI packages ---------------------------------------
PACKAGES = {  # package -> its folders of MJCF models
    "gymnasium": ["envs/mujoco/assets"],
    "dm_control": ["suite", "locomotion"],
    "robosuite": ["models/assets/robots", "models/assets/grippers", "models/assets/bases"],
}
BUDGET = float(os.environ.get("CASDYN_MJCF_BUDGET", "25"))  # seconds; 0: no limit


def _package_files() -> tuple[list[tuple[str, Path]], list[str]]:
    """``([(package/relative/path, path)], packages not installed)``."""
    files, missing = [], []
    for package, folders in PACKAGES.items():
        spec = importlib.util.find_spec(package)
        if spec is None or not spec.submodule_search_locations:
            missing.append(package)
            continue
        root = Path(next(iter(spec.submodule_search_locations)))
        for folder in folders:
            found = sorted(glob.glob(str(root / folder / "**" / "*.xml"), recursive=True))
            files += [(f"{package}/{Path(p).relative_to(root)}", Path(p)) for p in found]
    return files, missing


@pytest.mark.slow
def test_the_installed_packages_models_agree_with_mujoco(capsys):
    """Each file MuJoCo compiles into a model with joints loads, and agrees with MuJoCo;
    files are taken in a fixed shuffled order until the time budget is spent. The shipped
    Ant is always among them."""
    files, missing = _package_files()
    order = np.random.default_rng(0).permutation(len(files))
    checked, skipped, disagree = ["robots/ant.xml"], [], []
    _agrees(_load(robot_mjcf("ant")), mujoco.MjModel.from_xml_string(robot_mjcf("ant")),
            seeds=(5,))
    start = time.monotonic()
    for index in order:
        shown, path = files[index]
        if BUDGET and time.monotonic() - start > BUDGET:
            skipped.append((shown, "not reached within the time budget"))
            continue
        try:
            m = mujoco.MjModel.from_xml_path(str(path))
        except ValueError as error:
            skipped.append((shown, "not a model MuJoCo compiles alone: "
                            + str(error).splitlines()[0][:100]))
            continue
        if m.nv == 0:
            skipped.append((shown, "no joints"))
            continue
        robot = _load(m)
        errors = largest_errors(robot, m, frame_limit=3)
        (checked if max(errors.values()) < EXACT else disagree).append(shown)
        if disagree and disagree[-1] == shown:
            disagree[-1] = f"{shown}: {errors}"
    with capsys.disabled():
        print(f"\nload_mjcf agrees with MuJoCo on {len(checked)} models "
              f"({len(disagree)} disagree); not installed: {', '.join(missing) or 'none'}")
        for shown, reason in skipped:
            print(f"  skipped {shown}: {reason}")
    assert not disagree, disagree
    # gymnasium and dm_control are in the test extra; robosuite's models come from
    # `pip install --no-deps robosuite` (in .ci/test, the README's test command): its
    # dependency mink 0.0.5 pins numpy<2, and only its MJCF files are read
    assert not missing, (f"not installed: {missing}; pip install \".[test]\" && pip install "
                         "--no-deps robosuite==1.5.2")
