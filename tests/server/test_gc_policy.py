"""The server's collector policy (``server.gc_policy``): a closed connection is freed without
the cyclic collector, young cycles go at the next pass, survivors are frozen, and a full pass
still frees a cycle among frozen objects."""

from __future__ import annotations

import asyncio
import gc
import subprocess
import sys
import textwrap
import weakref

from wsclient import Client

from server.app import running
from server.storage.memory import MemoryStore


async def test_a_closed_connection_is_freed_by_reference_counting_alone() -> None:
    gc.collect()
    gc.disable()  # only reference counting may free it
    try:
        async with running(port=0, store=MemoryStore()) as srv:
            ann = await Client.open(srv.url, "Ann")
            player = ann.welcome["player"]["id"]
            (client,) = srv.app.outbox.connections(player)
            transport = weakref.ref(client.ws.transport)
            del client
            await ann.close()
            for _ in range(100):
                if transport() is None:
                    break
                await asyncio.sleep(0.02)
            assert transport() is None, "the closed transport is still alive"
    finally:
        gc.enable()


COLLECTOR_RUN = textwrap.dedent("""
    import asyncio, gc, weakref
    from server.gc_policy import Collector, full_pass

    class Node:
        pass

    def cycle():
        a, b = Node(), Node()
        a.other, b.other = b, a
        return weakref.ref(a)

    async def main():
        collector = Collector(young_seconds=0.05, full_seconds=3600)
        collector.start()
        assert not gc.isenabled()
        young = cycle()  # garbage at once: the next young pass frees it
        kept = [Node() for _ in range(1000)]
        frozen_before = gc.get_freeze_count()
        await asyncio.sleep(0.2)
        print("young cycle freed", young() is None)
        print("survivors frozen", gc.get_freeze_count() - frozen_before >= 1000)
        holder = [Node()]
        old = cycle()
        holder.append(old())
        await asyncio.sleep(0.2)  # the cycle survives a pass: frozen with it
        holder.clear()
        await asyncio.sleep(0.2)
        print("old cycle left to the full pass", old() is not None)
        full_pass()
        print("full pass freed it", old() is None)
        collector.stop()
        print("automatic collection back", gc.isenabled())
        del kept

    asyncio.run(main())
""")


def test_the_collector_frees_young_cycles_freezes_survivors_and_a_full_pass_the_old() -> None:
    run = subprocess.run([sys.executable, "-c", COLLECTOR_RUN], capture_output=True,
                         text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines == [
        "young cycle freed True",
        "survivors frozen True",
        "old cycle left to the full pass True",
        "full pass freed it True",
        "automatic collection back True",
    ], run.stdout
