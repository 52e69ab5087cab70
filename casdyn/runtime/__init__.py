"""Numbers in, numbers out: the numeric call engine behind :class:`casdyn.RigidBodyTree`.

``evaluator`` runs a ``casadi.Function`` on preallocated buffers; ``entry`` loads the
compiled entry point that calls a generated library straight from Python."""
