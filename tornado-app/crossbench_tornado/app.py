"""The Tornado application: routes, Tomcat-compatible path handling, settings fit for measuring."""

from __future__ import annotations

from pathlib import Path

from tornado import web

from crossbench_contract import paths
from crossbench_contract.static import served_files

from . import db, handlers


class CrossbenchApplication(web.Application):
    """Normalises every path the way Tomcat's connector does before routing (crossbench_contract/paths.py)."""

    def find_handler(self, request, **kwargs):
        try:
            request.path = paths.reencode(paths.normalize(request.path))
        except paths.InvalidPath:
            return self.get_handler_delegate(request, handlers.BadRequestHandler)
        return super().find_handler(request, **kwargs)


def make_app(static_dir: Path, database: db.Database | None = None) -> web.Application:
    static = {"path": str(static_dir), "served": served_files(static_dir)}
    routes = [
        (r"/hello", handlers.HelloHandler),
        (r"/now", handlers.NowHandler),
        (r"/json", handlers.JsonHandler),
        (r"/plaintext", handlers.PlaintextHandler),
        (r"/delay/sync", handlers.SyncDelayHandler),
        (r"/delay/async", handlers.AsyncDelayHandler),
        (r"/static/(.*)", handlers.StaticHandler, static),
        *db.routes(database or db.Database(None, 1, 1.0)),
    ]
    # debug off (it disables caches), access log off (it would be measured too).
    return CrossbenchApplication(
        routes, debug=False, default_handler_class=handlers.NotFoundHandler, log_function=lambda handler: None
    )
