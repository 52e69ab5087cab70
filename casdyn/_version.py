"""The package version, in one place."""

__version__ = "0.1.0"
"""casdyn's version (PEP 440); ``casdyn --version`` prints it too."""
