"""MkDocs hook: show the Sphinx roles of casdyn's docstrings as plain code.

The docstrings write cross-references the Sphinx way (``:class:`~casdyn.model.Model```,
``:meth:`compile```). The API reference renders them with mkdocstrings, which leaves the role
in front of the code span; this hook drops the role and, as Sphinx does for a leading ``~``,
keeps only the last component of the dotted name.
"""

from __future__ import annotations

import re

ROLE = re.compile(r":(?:class|func|meth|attr|mod|data|exc|obj):<code>(~?)([^<]*)</code>")


def _plain(match: re.Match) -> str:
    tilde, name = match.groups()
    return f"<code>{name.rsplit('.', 1)[-1] if tilde else name}</code>"


def on_page_content(html: str, **kwargs) -> str:
    return ROLE.sub(_plain, html)
