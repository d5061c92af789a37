"""Does the server answer every pipelined request? Seed 001 notes servers that silently drop them.

Sends N GETs in one write on one raw socket (the bytes wrk's pipelining sends) and counts the complete
responses that come back (status line, headers, Content-Length body) until N are in, the server closes, or
the time is up.
"""

from __future__ import annotations

import re
import socket
import time
from dataclasses import asdict, dataclass

STATUS_LINE = re.compile(rb"^HTTP/1\.[01] (\d{3})")
CONTENT_LENGTH = re.compile(rb"^content-length:\s*(\d+)\s*$", re.IGNORECASE | re.MULTILINE)


@dataclass(frozen=True)
class PipelineCheck:
    path: str
    sent: int
    answered: int  # complete responses
    statuses: dict[int, int]  # status -> count
    bodies_as_expected: int  # answers whose body is the expected one (all of them when none is given)
    leftover_bytes: int  # bytes after the last complete response
    elapsed_ms: float
    closed_by_server: bool

    @property
    def verified(self) -> bool:
        return self.answered == self.sent == self.bodies_as_expected and set(self.statuses) == {200}

    def to_dict(self) -> dict:
        return {**asdict(self), "verified": self.verified}


def pipelined_requests(host: str, port: int, path: str, depth: int) -> bytes:
    return (f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n" * depth).encode()


def split_responses(data: bytes) -> tuple[list[tuple[int, bytes]], int]:
    """(status, body) of each complete response at the start of data, and how many bytes are left over.
    Bodies need a Content-Length (both servers send one for their text answers)."""
    responses, offset = [], 0
    while True:
        end = data.find(b"\r\n\r\n", offset)
        if end < 0:
            break
        head = data[offset:end]
        status, length = STATUS_LINE.match(head), CONTENT_LENGTH.search(head)
        if not status or not length:
            break
        body_end = end + 4 + int(length.group(1))
        if body_end > len(data):
            break
        responses.append((int(status.group(1)), data[end + 4 : body_end]))
        offset = body_end
    return responses, len(data) - offset


def check(
    host: str,
    port: int,
    path: str = "/hello",
    depth: int = 24,
    expected_body: bytes | None = None,
    timeout_s: float = 5.0,
) -> PipelineCheck:
    started = time.perf_counter()
    deadline = started + timeout_s
    data, closed = b"", False
    with socket.create_connection((host, port), timeout=timeout_s) as sock:
        sock.sendall(pipelined_requests(host, port, path, depth))
        while len(split_responses(data)[0]) < depth and time.perf_counter() < deadline:
            sock.settimeout(max(0.01, deadline - time.perf_counter()))
            try:
                chunk = sock.recv(65536)
            except TimeoutError:
                break
            if not chunk:
                closed = True
                break
            data += chunk
    responses, leftover = split_responses(data)
    statuses: dict[int, int] = {}
    for status, _ in responses:
        statuses[status] = statuses.get(status, 0) + 1
    good = sum(1 for _, body in responses if expected_body is None or body == expected_body)
    return PipelineCheck(
        path, depth, len(responses), statuses, good, leftover, (time.perf_counter() - started) * 1000, closed
    )
