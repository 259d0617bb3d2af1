"""The server's shape, held as tests: every client message has exactly one handler, and no
module of ``server/`` imports itself back through others (type-only imports included)."""

from __future__ import annotations

import ast
import typing
from pathlib import Path

import pytest

from server import protocol as p
from server.app import running

SERVER = Path(__file__).resolve().parents[2] / "server"


def test_the_protocols_client_messages_are_exactly_the_union_the_server_parses() -> None:
    union = typing.get_args(typing.get_args(p.ClientMessage)[0])
    assert set(union) == set(p.CLIENT_MESSAGES)
    assert len(p.CLIENT_MESSAGES) == len(set(p.CLIENT_MESSAGES))


async def test_every_client_message_but_hello_has_exactly_one_handler() -> None:
    async with running() as server:
        table = server.app.gateway.handlers
    assert set(table) == set(p.CLIENT_MESSAGES) - {p.Hello}


def _modules() -> dict[str, Path]:
    named = {".".join(path.relative_to(SERVER.parent).with_suffix("").parts): path
             for path in SERVER.rglob("*.py")}
    return {name.removesuffix(".__init__"): path for name, path in named.items()}


def _imports(path: Path) -> set[str]:
    """Every ``server.*`` module ``path`` imports, wherever the import stands (under
    ``if TYPE_CHECKING:`` or inside a function too). ``from server import errors`` imports
    the module ``server.errors``; ``from server.store import Store`` the module
    ``server.store``."""
    modules = _modules()
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("server"))
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith(
                "server"):
            for alias in node.names:
                sub = f"{node.module}.{alias.name}"
                found.add(sub if sub in modules else node.module)
    return found


def _module_graph() -> dict[str, set[str]]:
    modules = _modules()
    return {name: {m for m in _imports(path) if m in modules and m != name}
            for name, path in modules.items()}


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state and (found := visit(nxt)) is not None:
                return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)) is not None:
            return found
    return None


def test_no_module_of_the_server_imports_itself_back() -> None:
    graph = {name: deps - {"server"} for name, deps in _module_graph().items()
             if name != "server"}
    assert _cycle(graph) is None, " -> ".join(_cycle(graph) or [])


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


DESKS = {"admin", "bot_desk", "challenge_desk", "history_desk", "account_desk", "rating_desk",
         "reviews", "stats", "tournament_desk", "ladder_desk", "chat_desk"}


@pytest.mark.parametrize("desk", sorted(DESKS))
def test_no_desk_imports_the_app_or_another_desk(desk: str) -> None:
    desks = DESKS
    imported = {m.removeprefix("server.") for m in _imports(SERVER / f"{desk}.py")}
    assert not imported & ({"app", "runner", "gateway", "node"} | (desks - {desk}))
