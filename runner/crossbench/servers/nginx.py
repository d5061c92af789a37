"""The nginx plug-in: Debian's nginx with a config rendered from runner/nginx/*.template into the cell's own
directory, master in the foreground. As an origin it serves the contract's static files (sendfile), /hello and
/now: seed 003's reference for holding connections and the physical reference for static files. As a reverse
proxy (`proxy_spec`) it stands in front of any other server, as seed 004's stack has it."""

from __future__ import annotations

import os
from pathlib import Path
from string import Template

from .. import builtin_servers, paths
from ..oskit import HOST
from .base import STATIC_ENDPOINT, ServerPlugin, Tool
from .lifecycle import ServerSpec

TEMPLATES = paths.RUNNER / "nginx"
TEMP_DIRS = ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
UPSTREAM_KEEPALIVE = 64  # idle connections each worker keeps to the server behind


class NginxPlugin(ServerPlugin):
    facts = builtin_servers.NGINX
    summary = "Debian's nginx: static files with sendfile, /hello and /now by return; or a reverse proxy"
    endpoints = frozenset({STATIC_ENDPOINT, "/hello", "/now"})
    default_port = 8081
    tools = (Tool("nginx", "apt-get install nginx-light"),)
    process_flag = "-w"
    proxies = True  # group proxy = "nginx": in front of the cell's server (proxy_spec)

    def spec(self, settings, port, work_dir, cpus=(), cell_dir=None, db_url=None, address=HOST) -> ServerSpec:
        locations = render("origin.locations.template", static_dir=paths.STATIC_DIR)
        return self._spec(settings, port, work_dir, cpus, locations, upstream="", address=address)

    def proxy_spec(
        self,
        settings: dict,
        port: int,
        upstream_port: int,
        work_dir: Path,
        cpus: tuple[int, ...] = (),
        address: str = HOST,
        upstream_address: str = HOST,
    ) -> ServerSpec:
        """nginx in front of the server listening on upstream_address:upstream_port: same paths, same answers."""
        keep = settings["upstream_keepalive"]
        upstream = (
            f"    upstream crossbench_upstream {{\n        server {upstream_address}:{upstream_port};\n"
            + (f"        keepalive {UPSTREAM_KEEPALIVE};\n" if keep else "")
            + "    }"
        )
        headers = (
            '            proxy_http_version 1.1;\n            proxy_set_header Connection "";'
            if keep
            else "            # a new connection to the server behind for every request"
        )
        locations = render("proxy.locations.template", upstream_headers=headers)
        return self._spec(settings, port, work_dir, cpus, locations, upstream, role="nginx-proxy", address=address)

    def _spec(self, settings, port, work_dir, cpus, locations, upstream, role="nginx", address=HOST) -> ServerSpec:
        # absolute: nginx reads the paths in its configuration (error.log) against its prefix, so a relative run
        # directory (--out results/x) would be named twice and nginx would not start
        prefix = Path(os.path.abspath(Path(work_dir) / f"{role}-{port}"))
        for name in TEMP_DIRS:
            (prefix / "temp" / name).mkdir(parents=True, exist_ok=True)
            # workers run as nobody when the master is root: they must write request bodies and proxied answers
            os.chmod(prefix / "temp" / name, 0o777)
        conf = prefix / "nginx.conf"
        conf.write_text(
            render(
                "nginx.conf.template",
                prefix=prefix,
                address=address,
                port=port,
                upstream=upstream,
                locations=locations,
                rlimit_nofile=2 * settings["worker_connections"] + 64,
                **{k: settings[k] for k in ("worker_processes", "worker_connections", "keepalive_requests", "backlog")},
            )
        )
        argv = ["nginx", "-p", str(prefix), "-c", str(conf), "-e", str(prefix / "error.log")]
        describe = {**settings, "config": str(conf)}
        return ServerSpec(
            role, port, argv, prefix / "console.log", describe, cpus, self.ready_timeout_s, address=address
        )


def render(template: str, **values) -> str:
    return Template((TEMPLATES / template).read_text()).substitute(**values)


PLUGIN = NginxPlugin()
