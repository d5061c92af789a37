"""The Tornado application: routes, Tomcat-compatible path handling, settings fit for measuring."""
from __future__ import annotations

from pathlib import Path

from tornado import web

from . import db, handlers, uri


class CrossbenchApplication(web.Application):
    """Normalises every path the way Tomcat's connector does before routing (see uri.py)."""

    def find_handler(self, request, **kwargs):
        try:
            request.path = uri.reencode(uri.normalize(request.path))
        except uri.InvalidPath:
            return self.get_handler_delegate(request, handlers.BadRequestHandler)
        return super().find_handler(request, **kwargs)


def make_app(static_dir: Path, database: db.Database | None = None) -> web.Application:
    static = {"path": str(static_dir), "served": handlers.served_files(static_dir)}
    routes = [
        (r"/hello", handlers.HelloHandler),
        (r"/now", handlers.NowHandler),
        (r"/delay/sync", handlers.SyncDelayHandler),
        (r"/delay/async", handlers.AsyncDelayHandler),
        (r"/static/(.*)", handlers.StaticHandler, static),
        *db.routes(database or db.Database(None, 1, 1.0)),
    ]
    # debug off (it disables caches), access log off (it would be measured too).
    return CrossbenchApplication(
        routes, debug=False, default_handler_class=handlers.NotFoundHandler,
        log_function=lambda handler: None)
