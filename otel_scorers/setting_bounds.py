"""The largest numbers a configuration may set, whatever the setting: the runtime hands them to
C (a deque's length, a socket's backlog, a metric's int64, a thread's wait), which refuses more
with an error that names no key. The file is refused at load instead, naming the key."""

from __future__ import annotations

#: A count or a size in bytes: at most 2**53, a whole number every language reads exactly.
MAX_COUNT = 2**53
#: A duration in seconds: at most 10**8 (three years), as nanoseconds within an int64 and below
#: the longest wait a thread may be given (`threading.TIMEOUT_MAX`, about 292 years).
MAX_SECONDS = 1e8
#: What gRPC takes as a number (a C int): a request's size in bytes.
MAX_GRPC_INT = 2**31 - 1
#: The sidecar's read timeout, which gRPC takes in milliseconds as a C int: about 24 days.
MAX_READ_TIMEOUT_S = MAX_GRPC_INT // 1000
#: Connections at once per receiver: gRPC aborts the whole process at 2**31 - 1, and a process
#: holds no more sockets than file descriptors (a million is a large limit).
MAX_CONNECTIONS = 1_000_000
