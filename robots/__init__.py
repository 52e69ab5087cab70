"""URDF models shipped with casdyn (installed as the package ``casdyn.robots``)."""
