"""Which Functions an export or a compile() names, and the names they are exported under.

A list of functions (``export_c``'s and ``compile()``'s ``functions=``) holds any of:

* ``"name"``: the function with its default options;
* ``("name", options)``: a variant, e.g. ``("inverse_dynamics", {"fext": False})``;
* ``("key", "name", options)``: a variant under a name of the caller's choosing;

or it is a dict ``{key: "name" or ("name", options)}``; one item alone may stand for the
list. The key of an item is the caller's key if given, else
:func:`casdyn.functions.names.readable_name`: the function's name, then what tells variants apart —
``nofext``, ``parametric``, the body, the frame it is ``relative_to``, ``local`` (e.g.
``inverse_dynamics_nofext``, ``get_transform_tool0_base``). Options with no readable form
(``contacts``, ``point``, ``dt``) do not show: ``contact_dynamics`` with any contacts is
``contact_dynamics``. Body names that read alike once made C identifiers (``a-b``,
``a.b``) get a short hash of the names. Two different Functions under one key are an error
that asks for keys; the same Function listed twice under one key is exported once.
"""

from __future__ import annotations

from collections.abc import Callable

from ..errors import InputError
from ..functions.names import identifier, readable_name

Item = tuple[str | None, str, dict]  # (key or None, function name, options)


def _is_item(value) -> bool:
    """Whether ``value`` is one item rather than a list of them."""
    if isinstance(value, str):
        return True
    if not isinstance(value, tuple):
        return False
    return (len(value) == 2 and isinstance(value[0], str) and isinstance(value[1], dict)) or \
        (len(value) == 3 and isinstance(value[0], str) and isinstance(value[1], str)
         and isinstance(value[2], dict))


def items(functions) -> list[Item]:
    """``functions`` (see the module) as a list of ``(key or None, name, options)``."""
    if isinstance(functions, dict):
        listed = []
        for key, value in functions.items():
            if not isinstance(key, str):
                raise InputError(f"the keys of functions must be names (strings), got {key!r}")
            if isinstance(value, str):
                listed.append((key, value, {}))
            elif _is_item(value) and len(value) == 2:
                listed.append((key, *value))
            else:
                raise InputError(f"functions[{key!r}] must be a function name or a (name, "
                                 f"options) pair, got {value!r}")
        return listed
    if _is_item(functions):
        functions = [functions]
    try:
        values = list(functions)
    except TypeError:
        raise InputError(f"functions must be a name, a list or a dict, got {functions!r}") \
            from None
    listed = []
    for item in values:
        if not _is_item(item):
            raise InputError(
                "functions must hold names, (name, options) pairs or (key, name, options) "
                f"triples, got {item!r}")
        listed.append((None, item, {}) if isinstance(item, str) else
                      (None, *item) if len(item) == 2 else item)
    return listed


def keyed(listed: list[Item], function_key: Callable[..., tuple]) -> dict[str, tuple]:
    """Export key → Function key (``function_key(name, **options)``, the FunctionCache's)
    for the ``listed`` items, in their order; an :class:`InputError` for a key that is not
    a C identifier or that two different Functions would share."""
    chosen: dict[str, tuple] = {}
    given: dict[str, str] = {}  # key -> how the item was written, for the error message
    for key, name, options in listed:
        function = function_key(name, **options)
        if key is None:
            key = readable_name(name, dict(function[1:]))
        elif key != identifier(key, "f"):
            raise InputError(
                f"export key {key!r} is not a C identifier (ASCII letters, digits and single "
                f"underscores, starting with a letter); e.g. {identifier(key, 'f')!r}")
        described = f"{name!r} with {options}" if options else repr(name)
        if key in chosen and chosen[key] != function:
            raise InputError(
                f"{given[key]} and {described} would both be exported as {key!r}; give them "
                f"keys of your own: (key, name, options) triples or a dict {{key: (name, "
                f"options)}} (casdyn export: KEY=NAME:...)")
        chosen.setdefault(key, function)
        given.setdefault(key, described)
    return chosen
