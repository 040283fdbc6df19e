#!/usr/bin/env python3
"""Interop: drive `cairn serve` with the official Python MCP SDK (`mcp` from
PyPI) through the story of seed 000 and assert the same lines as the Rust
end-to-end test (tests/mcp_stdio.rs). Exits non-zero on any mismatch.

Usage: python tests/interop/story.py [PATH-TO-CAIRN-BINARY]
(default: $CAIRN_BIN, else target/release/cairn, else target/debug/cairn)
"""

import asyncio
import contextlib
import datetime
import os
import pathlib
import sys
import tempfile

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import get_default_environment, stdio_client

FAILURES = []


def check(label, got, want):
    if got != want:
        FAILURES.append(label)
        print(f"MISMATCH {label}\n  got:  {got!r}\n  want: {want!r}", file=sys.stderr)
    else:
        print(f"ok   {label}")


def check_true(label, cond, detail=""):
    if not cond:
        FAILURES.append(label)
        print(f"MISMATCH {label} {detail}", file=sys.stderr)
    else:
        print(f"ok   {label}")


def attr(obj, *names):
    """The first of `names` that `obj` has (the SDK renamed camelCase fields)."""
    for n in names:
        if hasattr(obj, n):
            return getattr(obj, n)
    return None


def binary():
    if len(sys.argv) > 1:
        return os.path.abspath(sys.argv[1])
    if os.environ.get("CAIRN_BIN"):
        return os.path.abspath(os.environ["CAIRN_BIN"])
    root = pathlib.Path(__file__).resolve().parents[2]
    for p in (root / "target/release/cairn", root / "target/debug/cairn"):
        if p.exists():
            return str(p)
    sys.exit("cairn binary not found; build it or pass its path")


class Server:
    def __init__(self, project, args=()):
        env = get_default_environment()
        env.pop("CAIRN_DB", None)
        self.params = StdioServerParameters(
            command=binary(), args=["serve", *args], cwd=project, env=env
        )

    async def __aenter__(self):
        self._stack = contextlib.AsyncExitStack()
        await self._stack.__aenter__()
        try:
            read, write = await self._stack.enter_async_context(
                stdio_client(self.params, errlog=self._stack.enter_context(open(os.devnull, "w")))
            )
            self.s = await self._stack.enter_async_context(ClientSession(read, write))
            self.init = await self.s.initialize()
        except BaseException:
            await self._stack.aclose()
            raise
        return self

    async def __aexit__(self, *exc):
        return await self._stack.__aexit__(*exc)

    async def call(self, tool, args=None):
        res = await self.s.call_tool(tool, args or {})
        text = "".join(c.text for c in res.content if getattr(c, "type", "") == "text")
        return text, bool(attr(res, "is_error", "isError"))

    async def structured(self, tool, args=None):
        """(text, structuredContent) of a successful call; the SDK validates
        the structure against the tool's outputSchema itself."""
        res = await self.s.call_tool(tool, args or {})
        text = "".join(c.text for c in res.content if getattr(c, "type", "") == "text")
        check_true(f"{tool} succeeds", not attr(res, "is_error", "isError"), text)
        return text, attr(res, "structured_content", "structuredContent")

    async def ok(self, tool, args=None):
        text, err = await self.call(tool, args)
        check_true(f"{tool} succeeds", not err, text)
        return text

    async def err(self, tool, args=None):
        text, err = await self.call(tool, args)
        check_true(f"{tool} fails", err, text)
        return text


async def story(project):
    d = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
    tune, prefix, token = (
        f"{d}-tune-search-ranking",
        f"{d}-add-prefix-query-support",
        f"{d}-tokenizer-fix",
    )
    async with Server(project) as c:
        check("server name", attr(c.init, "server_info", "serverInfo").name, "cairn")
        check_true("instructions mention task_bootstrap", "task_bootstrap" in (c.init.instructions or ""))
        tools = (await c.s.list_tools()).tools
        check("tool count", len(tools), 14)
        schemas = {t.name: attr(t, "output_schema", "outputSchema") for t in tools}
        check_true("every tool has an object outputSchema",
                   all((sch or {}).get("type") == "object" for sch in schemas.values()), schemas)
        meta = {t.name: (attr(t, "meta", "_meta") or {}).get("cairn/capability") for t in tools}
        check("observe capability", meta.get("observe"), "observe")
        check("task_query capability", meta.get("task_query"), "read")
        check("prompt count", len((await c.s.list_prompts()).prompts), 7)
        resources = (await c.s.list_resources()).resources
        check("resource uris", sorted(str(r.uri) for r in resources), sorted(
            [f"cairn://prompts/{n}" for n in ("research", "plan", "implement", "validate", "handoff", "resume")]
            + ["cairn://skills/cairn-method"]
        ))
        body = await c.s.read_resource("cairn://skills/cairn-method")
        check_true("method resource is markdown", body.contents[0].text.startswith("# The cairn method"))

        check("bootstrap empty", await c.err("task_bootstrap"),
              "No task to bootstrap; pass task_id or select a task first.")
        check("create", await c.ok("task_create", {"name": "tune search ranking"}), f"Created {tune}.")
        check("observe", await c.ok("observe", {"text": "bm25 ranking confirmed against t/cairn-search.lisp"}),
              f"Observed on {tune}.")
        check("fork", await c.ok("task_fork", {"name": "add prefix query support"}),
              f"Forked {prefix} from {tune} (phase-of).")
        text, created = await c.structured("task_create", {"name": "tokenizer fix"})
        check("create tokenizer", text, f"Created {token}.")
        check("create structuredContent", created,
              {"slug": token, "created": True, "current": False, "possibleDuplicates": []})
        check("link", await c.ok("task_link", {"target_id": token, "edge_type": "depends-on"}),
              f"Linked {prefix} -> {token} (depends-on).")
        check("set metadata", await c.ok("task_set_metadata", {"key": "acceptance", "value": "prefix queries return ranked snippets"}),
              f"Set acceptance on {prefix}.")
        check("observe prefix", await c.ok("observe", {"text": "prefix queries need a query parser change in src/search.rs:45-78"}),
              f"Observed on {prefix}.")
        check("frontier before", await c.ok("task_query", {"query": '(query "plan-frontier")'}), "No matching tasks.")
        check("complete tokenizer", await c.ok("task_update_status", {"status": "completed", "task_id": token}),
              f"{token} is now completed.")
        text, frontier = await c.structured("task_query", {"query": '(query "plan-frontier")'})
        check("frontier after", text,
              f"1 task:\n- {prefix} (active) obs=1 edges=2\n    acceptance: prefix queries return ranked snippets")
        check("frontier structuredContent shape", (frontier or {}).get("shape"), "tasks")
        rows = (frontier or {}).get("result") or [{}]
        check("frontier structuredContent task",
              {k: rows[0].get(k) for k in ("slug", "status", "parent", "obs-count", "edge-count", "metadata")},
              {"slug": prefix, "status": "active", "parent": tune, "obs-count": 1, "edge-count": 2,
               "metadata": {"acceptance": "prefix queries return ranked snippets"}})
        text, count = await c.structured("task_query", {"query": "(-> (all) (:count))"})
        check("count text", text, "3")
        check("count structuredContent", count, {"shape": "count", "result": 3, "truncated": None})
        check("read surface refuses mutations",
              await c.err("task_query", {"query": '(-> (current) (:set-status! "completed"))'}),
              "Query error: Mutations need the task_query_write surface; task_query is read-only.")
        check("search", await c.ok("task_search", {"query": "prefix query*"}),
              f"1. [{prefix}]  ({d})\n    [prefix] queries need a [query] parser change in src/search.rs:45-78")
        for q in ("it's", "@x", "why?", "a,b", "OR", "C++", '"'):
            text, err = await c.call("task_search", {"query": q})
            check_true(f"hostile search {q!r} does not error", not err and not text.startswith("Could not parse"), text)
        check("timeline page 1", await c.ok("timeline", {"limit": 2}),
              f"{prefix} — last 2 events\n"
              "  8  observation  prefix queries need a query parser change in src/search.rs:45-78\n"
              "  7  task.set-metadata  acceptance = prefix queries return ranked snippets")
        check("timeline page 2", await c.ok("timeline", {"limit": 2, "before_seq": 7}),
              f"{prefix} — last 2 events\n  6  task.link  → {token} (depends-on)\n  3  task.create")
        check("timeline bad cursor", await c.err("timeline", {"before_seq": "x"}),
              'before_seq must be an integer, got "x".')
        handoff = await c.ok("handoff", {"summary": "prefix queries land; tokenizer fix is next"})
        root = os.path.realpath(project)
        check_true("handoff line", handoff.startswith(
            f"Handoff scaffolded for {prefix} at {root}/.cairn/tasks/{prefix}/")
            and handoff.endswith("_prefix-queries-land-tokenizer-fix-is-next.md"), handoff)
        note = handoff.split(" at ", 1)[1]
        check_true("handoff note exists", os.path.isfile(note), note)
        check("fork from itself", await c.err("task_fork", {"name": "add prefix query support"}),
              "A task cannot fork from itself.")
        check("link to itself", await c.err("task_link", {"target_id": prefix, "edge_type": "related"}),
              "A task cannot link to itself.")
        check("bad status", await c.err("task_update_status", {"status": "done"}),
              '"done" is not a valid status; expected one of open, active, completed, abandoned, blocked.')

    async with Server(project) as c2:
        check("fresh process has no current task", await c2.err("task_get"),
              "No current task; create or select one first.")
        boot = await c2.ok("task_bootstrap", {"task_id": prefix})
        check_true("bootstrap state", boot.startswith(f"{prefix}  [active]\n  add prefix query support\n  parent: {tune}\n  edges:\n    depends-on {token}\n"), boot)
        check_true("bootstrap handoffs", "\n  handoffs:\n    - prefix queries land; tokenizer fix is next (.cairn/tasks/" in boot, boot)

    async with Server(project, ["--grant", "read"]) as r:
        names = [t.name for t in (await r.s.list_tools()).tools]
        check("read grant tools", names, ["task_search", "task_get", "timeline", "task_query", "task_bootstrap"])
        check("read grant refuses observe", await r.err("observe", {"text": "x", "task_id": prefix}),
              "observe needs the cairn/observe capability, which this server was not granted.")


def main():
    with tempfile.TemporaryDirectory() as project:
        os.mkdir(os.path.join(project, ".git"))
        asyncio.run(story(project))
    if FAILURES:
        print(f"{len(FAILURES)} mismatches: {', '.join(FAILURES)}", file=sys.stderr)
        sys.exit(1)
    print("interop story: all lines match")


if __name__ == "__main__":
    main()
