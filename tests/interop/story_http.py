#!/usr/bin/env python3
"""Interop over Streamable HTTP: the same story and checks as story.py (the
official Python MCP SDK driving cairn), but against one
`cairn serve --http 127.0.0.1:0` with bearer tokens instead of a stdio
process per session. story.py's `Server(project, args)` becomes an HTTP
session: no args → a read,observe,write token; `--grant read` → a read
token. Also checks the 401 for a missing token. Exits non-zero on any
mismatch.

Usage: python tests/interop/story_http.py [PATH-TO-CAIRN-BINARY]
"""

import asyncio
import contextlib
import re
import os
import pathlib
import signal
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import story  # noqa: E402  (the shared story and its check helpers)

from mcp import ClientSession  # noqa: E402

try:  # mcp >= 1.24 / 2.x
    from mcp.client.streamable_http import streamable_http_client as _new_client
    from mcp.shared._httpx_utils import create_mcp_http_client
except ImportError:  # older SDKs
    _new_client = None
    from mcp.client.streamable_http import streamablehttp_client as _old_client


def open_transport(url, token):
    headers = {"Authorization": f"Bearer {token}"}
    if _new_client is not None:
        return _new_client(url, http_client=create_mcp_http_client(headers=headers))
    return _old_client(url, headers=headers)


URL = None
TOKENS = {}


FENCED = []


def unfence(text):
    """The text inside a fence (docs/mcp.md "Fenced text": over HTTP the
    agent-written parts of a tool's text come between a `NOTE-<nonce>` line
    and an `END-<nonce>` line, each quoted in «…», invisible characters as
    \\u{hex}), so the seed's exact strings can be compared; a text without a
    fence is returned as it is. Each fenced text is remembered in FENCED."""
    if not text.startswith("NOTE-"):
        return text
    nonce = text[5:].split(" ", 1)[0]
    lines = text.split("\n")
    if not nonce or lines[-1] != f"END-{nonce}":
        return text
    FENCED.append((nonce, text))
    # Drop the bylines (` — by session S, YYYY-MM-DD HH:MM UTC`, outside
    # the quotes: docs/mcp.md "Who wrote it and when").
    body = "\n".join(re.sub(r" — by session [^»\n]*$", "", l) for l in lines[1:-1])
    body = body.replace("«", "").replace("»", "")
    return re.sub(r"\\u\{([0-9a-f]+)\}", lambda m: chr(int(m.group(1), 16)), body)


class HttpServer(story.Server):
    """One MCP session on the shared HTTP server, chosen by story.py's args;
    tool texts are compared unfenced (see `unfence`)."""

    async def call(self, tool, args=None):
        text, err = await super().call(tool, args)
        return unfence(text), err

    async def structured(self, tool, args=None):
        text, structured = await super().structured(tool, args)
        return unfence(text), structured

    def __init__(self, project, args=()):
        self.token = TOKENS["read"] if "--grant" in args else TOKENS["all"]

    async def __aenter__(self):
        self._stack = contextlib.AsyncExitStack()
        await self._stack.__aenter__()
        try:
            streams = await self._stack.enter_async_context(open_transport(URL, self.token))
            read, write = streams[0], streams[1]
            self.s = await self._stack.enter_async_context(ClientSession(read, write))
            self.init = await self.s.initialize()
        except BaseException:
            await self._stack.aclose()
            raise
        return self


async def unauthorized():
    refused = False
    try:
        async with open_transport(URL, "cairn_not-a-token") as streams:
            async with ClientSession(streams[0], streams[1]) as s:
                await asyncio.wait_for(s.initialize(), 20)
    except Exception:  # the SDK surfaces the refusal as an error (group)
        refused = True
    story.check_true("the SDK's initialize with an unknown token fails", refused)
    req = urllib.request.Request(URL, method="POST", data=b"{}", headers={
        "Content-Type": "application/json", "Accept": "application/json, text/event-stream"})
    try:
        urllib.request.urlopen(req, timeout=20)
        story.check("no token is 401", 200, 401)
    except urllib.error.HTTPError as e:
        story.check("no token is 401", e.code, 401)
        story.check("WWW-Authenticate", e.headers.get("WWW-Authenticate"), 'Bearer realm="cairn"')


def main():
    global URL
    cairn = story.binary()
    with tempfile.TemporaryDirectory() as project:
        os.mkdir(os.path.join(project, ".git"))
        env = dict(os.environ)
        env.pop("CAIRN_DB", None)

        def token(name, grant):
            out = subprocess.run([cairn, "token", "create", name, "--grant", grant],
                                 cwd=project, env=env, check=True, capture_output=True, text=True)
            return out.stdout.strip()

        TOKENS["all"] = token("python-agent", "read,observe,write")
        TOKENS["read"] = token("python-reader", "read")
        srv = subprocess.Popen([cairn, "serve", "--http", "127.0.0.1:0"], cwd=project, env=env,
                               stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True)
        try:
            line = srv.stderr.readline()
            URL = line[line.index("http://"):].split(" ")[0]
            story.Server = HttpServer
            asyncio.run(story.story(project))
            story.check_true("agent-written text is fenced over HTTP (4 texts)", len(FENCED) == 4,
                             f"{len(FENCED)} fenced texts")
            story.check_true("each nonce appears only on its NOTE and END lines",
                             all(t.count(n) == 2 for n, t in FENCED), repr(FENCED[:1]))
            story.check_true("a fresh nonce per response",
                             len({n for n, _ in FENCED}) == len(FENCED), repr(FENCED[:2]))
            asyncio.run(unauthorized())
        finally:
            srv.send_signal(signal.SIGTERM)
            code = srv.wait(timeout=30)
            story.check("server exits 0 on SIGTERM", code, 0)
    if story.FAILURES:
        print(f"{len(story.FAILURES)} mismatches: {', '.join(story.FAILURES)}", file=sys.stderr)
        sys.exit(1)
    print("interop story over HTTP: all lines match")


if __name__ == "__main__":
    main()
