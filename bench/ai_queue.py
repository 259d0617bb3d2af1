"""What a server pays to have its AI moves found by `discus worker` through Redis.

``python -m bench.ai_queue [--jobs N]``: the same Connect Four jobs (a real engine at depth
8, one worker process) answered by the server's own pool and by a worker through the Redis
job stream, one after another; prints p50/p99 of the server's wait per move and the ratio
(Redis path over local pool). Then the time from a worker's death (SIGKILL, holding a job
whose engine hangs) to the move from another worker, which is about the claim idle time.

``python -m bench.ai_queue --answers N``: what the server's own pool pays per answer when
several workers answer at once: ``N`` quick Connect Four jobs (the beginner, depth 2, a real
engine) kept ``IN_FLIGHT`` at a time on ``ANSWER_WORKERS`` processes, for ``AiPool`` and for
``OneByOne`` (the reader as it was: a poll and two reads per message, a dispatch after each)
in the same run, alternating, ``--rounds`` times each; prints the server process's CPU per
answer and answers per second, medians, and the ratio (the pool over the reference).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

from ai.levels import DEFAULT_LEVELS, Level
from server.engines import AiJob, AiPool
from server.engines.messages import FROM_ENGINE, decode
from server.engines.queued import QueuedPool, live_workers
from server.engines.remote_worker import DEFAULT_CLAIM_IDLE, Worker

REDIS_URL = os.environ.get("DISCUS_BENCH_REDIS_URL", "redis://127.0.0.1:6379/0")
DEPTH_EIGHT = Level("eight", 9, "", 8, 20.0, 30.0, None, candidates=1, margin=0, rails=True)
SCRIPTED = Path(__file__).resolve().parent.parent / "tests" / "server"


def _pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _jobs(count: int) -> list[AiJob]:
    """Distinct early positions (so no answer is a repeat), each a real search."""
    jobs = []
    for i in range(count):
        moves = (i % 7, (i // 7) % 7, (i // 49) % 7)
        jobs.append(AiJob("connect4", moves, DEPTH_EIGHT, i))
    return jobs


async def _time(pool: AiPool | QueuedPool, jobs: list[AiJob]) -> list[float]:
    waits = []
    for job in jobs:
        started = time.perf_counter()
        answer = await pool.think(job)
        waits.append(time.perf_counter() - started)
        assert not answer.fallback
    return waits


async def _takeover(prefix: str) -> float:
    """Seconds from SIGKILL of a worker holding a job to the move from another worker."""
    node = QueuedPool(REDIS_URL, games=("connect4",), prefix=prefix, queue_timeout=60.0)
    await node.start()
    code = (
        "import asyncio\nfrom server.engines import AiPool\n"
        "from server.engines.remote_worker import Worker\n"
        "pool = AiPool(processes=1, games=('connect4',), search='scripted_engines:stuck',"
        " warm_up='scripted_engines:warm_up')\n"
        f"asyncio.run(Worker({REDIS_URL!r}, prefix={prefix!r}, pool=pool).run())\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SCRIPTED), os.getcwd()])}
    holder = subprocess.Popen([sys.executable, "-c", code], env=env, start_new_session=True)
    rescuer = Worker(REDIS_URL, prefix=prefix, pool=AiPool(processes=1, games=("connect4",)))
    try:
        while not await live_workers(node._client, prefix):
            await asyncio.sleep(0.1)
        started = asyncio.Event()
        patient = Level("patient", 9, "", 8, 20.0, 30.0, None, candidates=1, margin=0,
                        rails=False)
        thinking = asyncio.create_task(node.think(AiJob("connect4", (3,), patient, 1),
                                                  lambda _: started.set()))
        await started.wait()
        ready = asyncio.Event()
        rescuing = asyncio.create_task(rescuer.run(ready))
        await ready.wait()
        killed = time.perf_counter()
        os.killpg(holder.pid, signal.SIGKILL)
        answer = await thinking
        seconds = time.perf_counter() - killed
        assert not answer.fallback
        rescuer.stop()
        await rescuing
        return seconds
    finally:
        if holder.poll() is None:
            os.killpg(holder.pid, signal.SIGKILL)
        await node.close()


async def _main(count: int) -> None:
    prefix = f"discus-bench-{uuid.uuid4().hex[:8]}"
    jobs = _jobs(count)
    local = AiPool(processes=1, games=("connect4",))
    await local.start(wait_ready=True)
    try:
        await _time(local, jobs[:5])  # the engine's first searches load its tables
        direct = await _time(local, jobs)
    finally:
        await local.close()
    node = QueuedPool(REDIS_URL, games=("connect4",), prefix=prefix)
    worker = Worker(REDIS_URL, prefix=prefix, pool=AiPool(processes=1, games=("connect4",)))
    ready = asyncio.Event()
    running = asyncio.create_task(worker.run(ready))
    await node.start()
    await ready.wait()
    try:
        await _time(node, jobs[:5])
        queued = await _time(node, jobs)
    finally:
        worker.stop()
        await running
        await node.close()
    print(f"{count} Connect Four jobs at depth 8, one engine process, server's wait per move:")
    for label, waits in (("own pool", direct), ("via Redis", queued)):
        print(f"  {label:10} p50 {_pct(waits, 0.5) * 1000:7.2f} ms   "
              f"p99 {_pct(waits, 0.99) * 1000:7.2f} ms")
    print(f"  ratio (Redis / own pool): p50 {_pct(queued, 0.5) / _pct(direct, 0.5):.2f}x, "
          f"p99 {_pct(queued, 0.99) / _pct(direct, 0.99):.2f}x; "
          f"added p50 {(_pct(queued, 0.5) - _pct(direct, 0.5)) * 1000:.2f} ms")
    seconds = await _takeover(prefix + "-takeover")
    print(f"worker SIGKILLed holding a job -> move from another worker: {seconds:.2f} s "
          f"(claim idle {DEFAULT_CLAIM_IDLE:.1f} s)")


ANSWER_WORKERS = 2
IN_FLIGHT = 32


class OneByOne(AiPool):
    """The reference: ``AiPool`` with its reader as it was before answers were read in
    batches (each message polled for and read by itself, a dispatch after each)."""

    def _on_readable(self, worker: Any) -> None:
        try:
            while worker.conn.poll():
                self._on_message(worker, decode(worker.conn.recv_bytes(), *FROM_ENGINE))
                self._dispatch()
        except (EOFError, OSError):
            self._replace(worker, "the worker process died")


async def _answers(kind: type[AiPool], count: int) -> tuple[float, float]:
    """(server CPU ms per answer, answers per second) for ``count`` beginner jobs."""
    beginner = DEFAULT_LEVELS["connect4"][0]
    pool = kind(processes=ANSWER_WORKERS, games=("connect4",))
    await pool.start(wait_ready=True)
    jobs = [AiJob("connect4", (i % 7, (i // 7) % 7), beginner, i) for i in range(count)]
    try:
        for job in jobs[:20]:
            await pool.think(job)  # each engine's first searches load its tables
        slots = asyncio.Semaphore(IN_FLIGHT)

        async def one(job: AiJob) -> None:
            async with slots:
                assert not (await pool.think(job)).fallback

        cpu, wall = time.process_time(), time.perf_counter()
        await asyncio.gather(*(one(job) for job in jobs))
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    finally:
        await pool.close()
    return cpu * 1000 / count, count / wall


async def _compare(count: int, rounds: int) -> None:
    figures: dict[str, list[tuple[float, float]]] = {"AiPool": [], "OneByOne": []}
    for r in range(rounds):
        order = [AiPool, OneByOne] if r % 2 == 0 else [OneByOne, AiPool]
        for kind in order:
            figures[kind.__name__].append(await _answers(kind, count))
    print(f"{count} beginner Connect Four jobs, {IN_FLIGHT} in flight, {ANSWER_WORKERS} engine "
          f"processes, {rounds} rounds (medians); server process only:")
    medians = {}
    for name, runs in figures.items():
        cpu = statistics.median(c for c, _ in runs)
        rate = statistics.median(a for _, a in runs)
        medians[name] = (cpu, rate)
        print(f"  {name:9} {cpu:6.3f} ms CPU per answer   {rate:8.0f} answers/s   "
              f"(runs: {', '.join(f'{c:.3f}' for c, _ in runs)})")
    (new_cpu, new_rate), (old_cpu, old_rate) = medians["AiPool"], medians["OneByOne"]
    print(f"  ratio AiPool / OneByOne: CPU per answer {new_cpu / old_cpu:.2f}x, "
          f"answers/s {new_rate / old_rate:.2f}x")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=200)
    parser.add_argument("--answers", type=int, default=0,
                        help="compare the pool's reader with the reference on N jobs")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    if args.answers:
        asyncio.run(_compare(args.answers, args.rounds))
    else:
        asyncio.run(_main(args.jobs))


if __name__ == "__main__":
    main()
