"""Plots of joint trajectories (needs matplotlib: ``pip install casdyn[plot]``)."""

from __future__ import annotations

import os

import numpy as np

from .errors import CasdynError


def pyplot():
    """``matplotlib.pyplot`` drawing to files (the Agg backend, no screen needed); a
    :class:`casdyn.CasdynError` saying how to install it where matplotlib is missing."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise CasdynError("plots need matplotlib: pip install 'casdyn[plot]'") from exc
    return plt


def save_trajectory_plot(
    path: str | os.PathLike,
    t: np.ndarray,
    q: np.ndarray,
    tau: np.ndarray,
    joint_names,
    title: str = "",
    t_tau: np.ndarray | None = None,
) -> None:
    """Save joint positions ``q`` (N, nq) over ``t`` (N,) and torques ``tau`` (M, nq) over
    ``t_tau`` (M,; default ``t``) as two stacked panels in one image file."""
    plt = pyplot()
    t_tau = t if t_tau is None else t_tau
    fig, (top, bottom) = plt.subplots(2, 1, sharex=True, figsize=(8, 6), constrained_layout=True)
    for j, name in enumerate(joint_names):
        top.plot(t, q[:, j], label=name)
        bottom.step(t_tau, tau[:, j], where="post", label=name)
    top.set_ylabel("joint position [rad or m]")
    bottom.set_ylabel("joint torque [N m or N]")
    bottom.set_xlabel("time [s]")
    top.legend(fontsize="small", ncol=2)
    top.grid(True)
    bottom.grid(True)
    if title:
        top.set_title(title)
    fig.savefig(path, dpi=110)
    plt.close(fig)
