"""A TCP listener that outlasts running out of file descriptors, with one log line for it.

asyncio's own accept loop (`loop.create_server`) does not stop at an `accept()` that fails with
EMFILE: it logs a traceback for each of up to 100 tries per readiness of the listening socket and
re-arms itself once per failure, so for as long as the process is out of descriptors the loop is
busy logging thousands of tracebacks a second. This listener accepts with `sock_accept`, waits
`retry_s` after such a failure, logs it through the throttled log (with the number of failed
tries since the last line) and says once when it accepts again.
"""

from __future__ import annotations

import asyncio
import errno
import logging
import os
import resource
import socket
import ssl
import time
from collections.abc import Callable

from otel_scorers.throttled_log import throttled

logger = logging.getLogger("otel_scorers")

#: Out of descriptors (ours or the system's) or of kernel memory: waiting is all that helps.
_EXHAUSTED = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM})


async def bind(host: str, port: int, backlog: int = 100) -> list[socket.socket]:
    """Listening sockets for `host:port`, one per address it resolves to, as `create_server`
    binds them (`SO_REUSEADDR`, IPv6 sockets IPv6-only). Raises `OSError` if one cannot bind."""
    loop = asyncio.get_running_loop()
    infos = await loop.getaddrinfo(host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    sockets: list[socket.socket] = []
    try:
        for family, kind, proto, _name, address in dict.fromkeys(infos):
            listening = socket.socket(family, kind, proto)
            sockets.append(listening)
            listening.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:
                listening.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            listening.bind(address)
            listening.listen(backlog)
            listening.setblocking(False)
    except OSError:
        for listening in sockets:
            listening.close()
        raise
    return sockets


class Listener:
    """Accepts connections on `sockets` and hands each to `protocol_factory` (over TLS with
    `ssl_context`), until `close`. `name` says which receiver it is in the log."""

    def __init__(
        self,
        name: str,
        sockets: list[socket.socket],
        protocol_factory: Callable[[], asyncio.BaseProtocol],
        ssl_context: ssl.SSLContext | None = None,
        *,
        retry_s: float = 0.25,
    ) -> None:
        self.name = name
        self.sockets = sockets
        self._protocol_factory = protocol_factory
        self._ssl = ssl_context
        self._retry_s = retry_s
        self._tasks: set[asyncio.Task[None]] = set()
        self._accepting = [asyncio.create_task(self._accept_forever(listening)) for listening in sockets]

    async def _accept_forever(self, listening: socket.socket) -> None:
        loop = asyncio.get_running_loop()
        exhausted_since: float | None = None
        while True:
            try:
                connection, _address = await loop.sock_accept(listening)
            except (BlockingIOError, InterruptedError, ConnectionAbortedError):
                continue  # the connection went away before it was accepted
            except OSError as exc:
                if exc.errno not in _EXHAUSTED:
                    # Anything else ends one accept, not the listener (as asyncio's server does).
                    throttled.warning(
                        f"sidecar_accept_{self.name}_error",
                        "otel_scorers: %s could not accept a connection: %s",
                        self.name,
                        exc,
                    )
                    await asyncio.sleep(self._retry_s)
                    continue
                if exhausted_since is None:
                    exhausted_since = time.monotonic()
                throttled.warning(
                    f"sidecar_accept_{self.name}_{exc.errno}",
                    "otel_scorers: %s cannot accept connections: %s (the limit is %d open files); "
                    "retrying every %g s",
                    self.name,
                    os.strerror(exc.errno or 0),
                    resource.getrlimit(resource.RLIMIT_NOFILE)[0],
                    self._retry_s,
                )
                await asyncio.sleep(self._retry_s)
                continue
            if exhausted_since is not None:
                throttled.warning(
                    f"sidecar_accept_resumed_{self.name}",
                    "otel_scorers: %s accepts connections again, after %.1f s",
                    self.name,
                    time.monotonic() - exhausted_since,
                )
                exhausted_since = None
            task = asyncio.create_task(self._connect(connection))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _connect(self, connection: socket.socket) -> None:
        loop = asyncio.get_running_loop()
        try:
            await loop.connect_accepted_socket(self._protocol_factory, connection, ssl=self._ssl)
        except (OSError, asyncio.TimeoutError):
            # A failed TLS handshake or a peer gone already: asyncio's server says nothing either.
            connection.close()

    def close(self) -> None:
        """Stop accepting and close the listening sockets; connections being set up are dropped,
        connections already handed over are left to their protocols."""
        for task in (*self._accepting, *self._tasks):
            task.cancel()
        for listening in self.sockets:
            listening.close()
