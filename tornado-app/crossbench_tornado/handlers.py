"""One handler per endpoint of the contract (see SPEC.md: Endpoints)."""

from __future__ import annotations

import json
import os
import time

from tornado import web

from crossbench_contract import HELLO, JSON_TYPE, OK, TEXT_TYPE, tfb
from crossbench_contract.delay import parse_delay, sleep_at_least


class TextHandler(web.RequestHandler):
    """Plain-text answers with exact bytes; error pages in the same plain style."""

    def compute_etag(self):
        return None  # Tomcat sends no validator on dynamic answers; neither do we.

    def answer(self, body: bytes) -> None:
        self.set_header("Content-Type", TEXT_TYPE)
        self.finish(body)

    def write_error(self, status_code: int, **kwargs) -> None:
        self.set_header("Content-Type", TEXT_TYPE)
        self.finish(f"{self._reason.lower()}\n".encode())

    def delay_ms(self) -> int | None:
        """The parsed delay, or None after answering 400."""
        try:
            return parse_delay(self.get_query_arguments("ms", strip=False))
        except ValueError as e:
            self.set_status(400)
            self.answer(f"{e}\n".encode())
            return None


class HelloHandler(TextHandler):
    def get(self):
        self.answer(HELLO)

    head = get


class NowHandler(TextHandler):
    def get(self):
        self.answer(OK)

    head = get


class JsonHandler(TextHandler):
    """TechEmpower's JSON test: a new object serialised on every request."""

    def get(self):
        self.set_header("Content-Type", JSON_TYPE)
        self.finish(json.dumps(tfb.message(), separators=(",", ":")).encode())

    head = get


class PlaintextHandler(TextHandler):
    def get(self):
        self.answer(tfb.PLAINTEXT)

    head = get


class SyncDelayHandler(TextHandler):
    """Blocks the whole event loop for the delay, as seed 000's handler A does."""

    def get(self):
        ms = self.delay_ms()
        if ms is not None:
            time.sleep(ms / 1000)
            self.answer(OK)

    head = get


class AsyncDelayHandler(TextHandler):
    """Waits on the event loop's timer queue; the loop serves others meanwhile."""

    async def get(self):
        ms = self.delay_ms()
        if ms is not None:
            await sleep_at_least(ms / 1000)
            self.answer(OK)

    head = get


class NotFoundHandler(TextHandler):
    def prepare(self):
        raise web.HTTPError(404)


class BadRequestHandler(TextHandler):
    def prepare(self):
        raise web.HTTPError(400)


class StaticHandler(web.StaticFileHandler):
    """StaticFileHandler confined to the manifest's files: a directory or any other name is 404."""

    def initialize(self, path: str, served: frozenset[str]) -> None:
        super().initialize(path=path)
        self.served = served

    def get(self, path: str, include_body: bool = True):
        if not path or path.endswith("/"):  # a directory, or a file asked for as one
            raise web.HTTPError(404)
        return super().get(path, include_body)

    def validate_absolute_path(self, root: str, absolute_path: str):
        if os.path.relpath(absolute_path, root) not in self.served:
            raise web.HTTPError(404)
        return super().validate_absolute_path(root, absolute_path)

    def write_error(self, status_code: int, **kwargs) -> None:
        self.set_header("Content-Type", TEXT_TYPE)
        self.finish(f"{self._reason.lower()}\n".encode())
