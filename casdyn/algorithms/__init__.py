"""The algorithms, each a function of ``(model, q, ...)`` returning CasADi expressions.

``dynamics`` (RNEA, ABA, CRBA and the factorised forward dynamics), ``kinematics`` (poses,
Jacobians, centre of mass), ``task_space`` (frame velocities, accelerations, Jdot),
``centroidal`` (momentum and energies), ``contacts`` (contact and impulse dynamics),
``derivatives`` (analytical RNEA derivatives), ``identification`` (inertial parameters and
parametric models) and ``configuration`` (integrate, difference, neutral and random
configurations)."""
