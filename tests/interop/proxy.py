#!/usr/bin/env python3
"""A round-robin loopback HTTP proxy for the scale-out tests (issue 24;
tests/pg_scaleout_load.rs), Python's standard library only.

    proxy.py NAME=PORT [NAME=PORT ...]

Listens on 127.0.0.1 on a free port and prints `PORT` on its first stdout
line. Each request goes to the next backend in turn (2026-07-28 stateless
requests), except that a request naming an `Mcp-Session-Id` of the form
`NAME.ID` goes to the backend NAME (2025-11-25 sessions are sticky: each
backend runs `cairn serve --http --route-id NAME`, and the proxy routes on
the prefix as Caddy's `header_regexp` or nginx's `map` would; docs/team.md
"Sticky sessions"). When the connection
to a backend is refused or reset before a response arrives, the request
is sent to the next backend (a sticky one is not: its session lived
there, so the client hears 404 and opens a new one). Streaming responses
(`text/event-stream`) are passed on chunk by chunk.

Every retry is one line on stderr: `retry PORT -> PORT: WHY`.
"""

import http.client
import itertools
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

NAMED = dict((a.split("=", 1)[0], int(a.split("=", 1)[1])) for a in sys.argv[1:])
BACKENDS = list(NAMED.values())
TURN = itertools.count()
TURN_LOCK = threading.Lock()
HOP = {"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade", "host",
       "proxy-connection"}
RETRYABLE = (ConnectionRefusedError, ConnectionResetError, BrokenPipeError,
             http.client.RemoteDisconnected, ConnectionAbortedError)


class Proxy(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def relay(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else None
        sid = self.headers.get("Mcp-Session-Id")
        pinned = NAMED.get(sid.split(".", 1)[0]) if sid and "." in sid else None
        if pinned is not None:
            order = [pinned]
        else:
            with TURN_LOCK:
                first = next(TURN) % len(BACKENDS)
            order = BACKENDS[first:] + BACKENDS[:first]
        headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP}
        for i, port in enumerate(order):
            headers["Host"] = f"127.0.0.1:{port}"
            conn = http.client.HTTPConnection("127.0.0.1", port)
            try:
                conn.request(self.command, self.path, body=body, headers=headers)
                resp = conn.getresponse()
            except RETRYABLE as e:
                conn.close()
                if i + 1 < len(order):
                    print(f"retry {port} -> {order[i + 1]}: {e!r}", file=sys.stderr, flush=True)
                    continue
                self.send_error(404 if pinned is not None else 502,
                                "the session's server is gone" if pinned is not None
                                else "no backend answered")
                return
            self.answer(resp)
            conn.close()
            return

    def answer(self, resp):
        self.send_response(resp.status, resp.reason)
        stream = resp.getheader("Content-Length") is None
        for k, v in resp.getheaders():
            if k.lower() not in HOP and k.lower() != "content-length":
                self.send_header(k, v)
        if stream:
            self.send_header("Transfer-Encoding", "chunked")
        else:
            self.send_header("Content-Length", resp.getheader("Content-Length"))
        self.end_headers()
        try:
            if not stream:
                self.wfile.write(resp.read())
                return
            while True:
                chunk = resp.read1(65536)
                if not chunk:
                    break
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
        except (OSError, http.client.HTTPException):
            # The backend died mid-stream or the client went away: end the
            # client's connection so it sees the cut.
            self.close_connection = True

    do_GET = relay
    do_POST = relay
    do_DELETE = relay


class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256


def main():
    srv = Server(("127.0.0.1", 0), Proxy)
    print(srv.server_address[1], flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    main()
