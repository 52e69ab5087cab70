"""The small mathematical layer under the algorithms: spatial algebra in rotation +
translation form (:mod:`.spatial`), rigid-body inertias and their parameters
(:mod:`.inertia`), the Lie groups of the multi-dof joints (:mod:`.lie`) and the sparse
factorisations of the joint-space inertia matrix (:mod:`.factorization`).

Nothing here knows about robots: every function works on CasADi SX (or NumPy) values."""
