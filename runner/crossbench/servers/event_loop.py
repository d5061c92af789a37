"""What the event-loop servers share (Tornado, uvicorn): one event loop per process, every endpoint of the
contract, and /delay/sync blocking the loop, so each process serves one such request at a time."""

from __future__ import annotations

from .base import DB_ENDPOINTS, ENDPOINTS, TFB_ENDPOINTS, ServerPlugin


class EventLoopPlugin(ServerPlugin):
    endpoints = frozenset({*ENDPOINTS, *TFB_ENDPOINTS, *DB_ENDPOINTS})

    def parallel_limit(self, settings: dict, endpoint: str) -> int | None:
        return self.process_count(settings) if endpoint == "/delay/sync" else None
