"""What an operator's Prometheus scrapes from ``/metrics``: connections by state, refusals by
limit and reason, move acknowledgement and AI move latency, quick fallbacks, cluster takeovers.

Why a module of its own: the parts that see these happen (the gateway, the runner) only call
``refused``/``observe``; the counts kept elsewhere (the AI pool's fallbacks, the cluster's
takeovers, the gateway's open connections) are read at scrape time through ``read``. Each
server has its own registry (tests run several in one process). ``/metrics`` is served on the
node's own port (``server.web.http``); ``deploy/haproxy.cfg`` does not pass it through.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)


class _Reading(Collector):
    """Values read at scrape time from the parts that keep them."""

    def __init__(self, connections: Callable[[], Mapping[str, int]],
                 counts: dict[str, tuple[str, Callable[[], int]]]) -> None:
        self.connections = connections
        self.counts = counts

    def collect(self) -> Iterable[Metric]:
        gauge = GaugeMetricFamily("discus_connections", "Open websocket connections by state",
                                  labels=["state"])
        for state, count in sorted(self.connections().items()):
            gauge.add_metric([state], count)
        yield gauge
        for name, (text, read) in self.counts.items():
            yield CounterMetricFamily(name, text, value=read())


class Metrics:
    """One server's metrics and its registry."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.refusals = Counter(
            "discus_refusals", "Connections and requests refused, by limit and reason",
            ["limit", "reason"], registry=self.registry)
        self.move_ack = Histogram(
            "discus_move_ack_seconds", "From a move's frame to its acknowledgement (stored "
            "and announced)", buckets=LATENCY_BUCKETS, registry=self.registry)
        self.ai_move = Histogram(
            "discus_ai_move_seconds", "From asking the AI for a move to its answer (queueing "
            "included)", buckets=LATENCY_BUCKETS, registry=self.registry)
        self._connections: Callable[[], Mapping[str, int]] = dict
        self._counts: dict[str, tuple[str, Callable[[], int]]] = {}
        self.registry.register(_Reading(lambda: self._connections(), self._counts))

    def refused(self, limit: str, reason: str) -> None:
        self.refusals.labels(limit=limit, reason=reason).inc()

    def read_connections(self, states: Callable[[], Mapping[str, int]]) -> None:
        """Where the open connections by state are read at scrape time."""
        self._connections = states

    def read(self, name: str, text: str, value: Callable[[], int]) -> None:
        """A counter kept by another part, read at scrape time (``discus_<name>_total``)."""
        self._counts[f"discus_{name}"] = (text, value)

    def render(self) -> bytes:
        return generate_latest(self.registry)
