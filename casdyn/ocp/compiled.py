"""``compiled(f)``: a ``casadi.Function`` as compiled C, cached on disk — the name the OCP
has always given :func:`casdyn.compile_function`, which it is (same arguments)."""

from __future__ import annotations

from ..codegen.library import compile_function as compiled

__all__ = ["compiled"]
