"""The topics of :class:`casdyn.RigidBodyTree` beyond the core dynamics, each a mixin of
short delegating methods: identification, contacts and loops, geometry and the viewer, C
export. ``casdyn/tree.py`` composes them."""
