"""The viser server behind a :class:`casdyn.viewer.Viewer`: started on 127.0.0.1 on a given
or a free port (never silently on another), and stopped without viser's chatter on stdout
(the CLI's stdout carries the URL alone)."""

from __future__ import annotations

import contextlib
import io
import socket

import numpy as np

from ..errors import CasdynError, InputError


def serve(viser, port, label: str):
    """A viser server on 127.0.0.1: on ``port``, or on a free one when it is None."""
    if port is not None:
        if isinstance(port, bool) or not isinstance(port, int | np.integer) or not (
                0 < int(port) < 65536):
            raise InputError(f"port must be an integer in 1..65535, got {port!r}")
        port = int(port)
        with socket.socket() as probe:  # viser would move to the next free port silently
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                raise CasdynError(f"port {port} on 127.0.0.1 is in use; choose another or "
                                  "leave port=None for a free one") from None
    with quiet():  # viser prints a banner; the CLI's stdout carries the URL alone
        server = viser.ViserServer(host="127.0.0.1", port=0 if port is None else port,
                                   label=label, verbose=False)
    if port is not None and server.get_port() != port:
        stop(server)
        raise CasdynError(f"port {port} on 127.0.0.1 is in use; choose another or leave "
                          "port=None for a free one")
    return server


def quiet():
    return contextlib.redirect_stdout(io.StringIO())


def stop(server) -> None:
    with quiet():  # "Server stopped", printed by the server's thread as it ends
        server.stop()
