"""Names for C and CasADi: any URDF name in, a valid and unambiguous identifier out.

CasADi accepts a Function name only if it is ASCII letters, digits and single underscores,
starting with a letter; C symbols must also be unique within a program. URDF names may hold
anything (``iris__/imu_link``, ``arm (sim)``, non-ASCII, 300 characters). Readable names are
kept where they are already valid; where making them valid loses information (two names
that would read alike), a short hash of the original makes them distinct again.
"""

from __future__ import annotations

import hashlib
import re

_NOT_ALNUM = re.compile(r"[^A-Za-z0-9]+")
MAX_PART = 64  # characters of one readable part; longer ones are cut and hashed


def identifier(text: str, fallback: str = "robot", limit: int = MAX_PART) -> str:
    """``text`` with every run of characters other than ASCII letters and digits made one
    underscore, no underscore at either end, starting with a letter (``fallback`` is put in
    front otherwise, and stands alone for a text with no letter or digit at all). A result
    longer than ``limit`` is cut and ends in a hash of ``text`` (file names have a limit)."""
    cleaned = _NOT_ALNUM.sub("_", text).strip("_")
    if not cleaned:
        return fallback
    if not cleaned[0].isalpha():
        cleaned = f"{fallback}_{cleaned}"
    if len(cleaned) > limit:
        cleaned = f"{cleaned[: limit - 9].rstrip('_')}_{digest(text)}"
    return cleaned


def digest(text: str, length: int = 8) -> str:
    """A short, stable hexadecimal hash of ``text``."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:length]


def function_name(name: str, options: dict) -> str:
    """The CasADi (and C) name of the Function ``name`` with resolved ``options``: the
    function's name, ``nofext`` for the variant without external forces, then the body and
    reference frame, e.g. ``get_transform_tool0_base``, and ``local`` for vectors in the
    body's axes. A hash of the options is appended where the readable form could stand for
    other options too: a name changed by :func:`identifier` (which also cuts long names), a
    body with an underscore followed by a reference frame (``a`` in ``b_c`` would read as
    ``a_b`` in ``c``), or, where the axes are an option, a body whose name ends in
    ``_local``; and for the options with no readable form (``dt``, ``point``,
    ``contacts``), a hash of each."""
    parts = [readable_name(name, options)]
    if options.get("dt", 1.0) != 1.0:
        parts.append("dt" + digest(repr(options["dt"])))
    for key, tag in (("point", "p"), ("contacts", "c"), ("pairs", "pairs"),
                     ("obstacles", "obstacles")):  # no readable form: a hash of the value
        if options.get(key):
            parts.append(tag + digest(repr(options[key])))
    return "_".join(parts)


def readable_name(name: str, options: dict) -> str:
    """:func:`function_name` without the hashes of ``dt``, ``point`` and ``contacts``: the
    name a variant is exported under (its key in ``export_c``'s result, and its C symbol
    after the prefix) unless the caller names it. Variants that differ only in those
    options read alike here."""
    parts = [name]
    if options.get("fext") is False:
        parts.append("nofext")
    if options.get("parameters"):
        parts.append("parametric")
    if options.get("switched"):
        parts.append("switched")
    if options.get("jacobian"):
        parts.append("jacobian" if options["jacobian"] is True else "jacobian_ad")
    frames = [str(options[key]) for key in ("body", "relative_to")
              if options.get(key) is not None]
    readable = [identifier(frame, "f") for frame in frames]
    # a function with axes to choose: body "x" in local axes must not read as body "x_local"
    axes = "reference_frame" in options
    ambiguous = readable != frames or (len(frames) == 2 and "_" in frames[0]) or \
        (axes and any(frame.endswith("_local") for frame in readable))
    parts += readable
    local = options.get("reference_frame") == "local"
    if local:
        parts.append("local")
    if ambiguous:
        parts.append("h" + digest(repr((frames, "local") if local else frames)))
    return "_".join(parts)
