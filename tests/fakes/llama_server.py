"""A stand-in for `python -m llama_cpp.server` in lifecycle tests, run as a script in a child process.

It answers `GET /v1/models` on `--port` like the real server once it is up. Flags make it misbehave the ways a
real server can: `--startup-delay S` (slow to load), `--ignore-sigterm` (must be killed), `--never-listen`.
"""

from __future__ import annotations

import argparse
import json
import signal
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def _handler(alias: str) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (the http.server API)
            if self.path != "/v1/models":
                self.send_error(404)
                return
            body = json.dumps({"object": "list", "data": [{"id": alias, "object": "model"}]}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            print(format % args, flush=True)

    return Handler


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--model_alias", default="fake")
    parser.add_argument("--startup-delay", type=float, default=0.0)
    parser.add_argument("--ignore-sigterm", action="store_true")
    parser.add_argument("--never-listen", action="store_true")
    args, _ = parser.parse_known_args()
    if args.ignore_sigterm:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    print(f"fake llama server loading {args.model_alias}", flush=True)
    time.sleep(args.startup_delay)
    if args.never_listen:
        time.sleep(3600)
    ThreadingHTTPServer(("127.0.0.1", args.port), _handler(args.model_alias)).serve_forever()


if __name__ == "__main__":
    main()
