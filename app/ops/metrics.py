"""Prometheus metrics: each defined once here, counted where it happens, served at /metrics.

Under gunicorn (several processes) set PROMETHEUS_MULTIPROC_DIR, as the production image does:
each process writes its own files there and a scrape adds them up.
"""

import functools
import os

from prometheus_client import (CONTENT_TYPE_LATEST, REGISTRY, CollectorRegistry, Counter, Gauge, Histogram,
                               generate_latest, multiprocess)

# prometheus_client writes a metric's file as the metric is defined, below: its directory must exist
# first, whoever imports this (a gunicorn worker, `ronda worker`, its health check).
if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
    os.makedirs(os.environ["PROMETHEUS_MULTIPROC_DIR"], exist_ok=True)

SECONDS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30)

REQUESTS = Counter("ronda_http_requests_total", "HTTP requests answered", ["route", "method", "status"])
REQUEST_SECONDS = Histogram("ronda_http_request_duration_seconds", "Time to answer a request (a stream: to its "
                            "first byte)", ["route"], buckets=SECONDS)
ACTIONS = Counter("ronda_actions_applied_total", "Actions applied, by whom", ["by"])
STALE_WRITES = Counter("ronda_stale_versions_total", "Writes refused because the version moved on (412)")
GAMES_CREATED = Counter("ronda_games_created_total", "Games created (match games included)")
GAMES_FINISHED = Counter("ronda_games_finished_total", "Games that reached game over")
OPEN_STREAMS = Gauge("ronda_open_streams", "Event streams open now", multiprocess_mode="livesum")
QUEUE_DEPTH = Gauge("ronda_queue_depth", "Jobs waiting, by queue", ["queue"], multiprocess_mode="mostrecent")
BOT_MOVE_SECONDS = Histogram("ronda_bot_move_latency_seconds", "From the write that made a bot's move due to the "
                             "bot's own write", buckets=SECONDS)
APP_REQUESTS = Counter("ronda_app_requests_total", "Requests made in each app (public: without an app key)", ["app"])
APP_LIVE_GAMES = Gauge("ronda_app_live_games", "Open and active games of each app", ["app"],
                       multiprocess_mode="mostrecent")
APP_DELIVERIES = Gauge("ronda_app_webhook_deliveries", "Each app's webhook deliveries now pending or failed",
                       ["app", "status"], multiprocess_mode="mostrecent")
WEBHOOK_ATTEMPTS = Counter("ronda_webhook_attempts_total", "Webhook attempts, by app, endpoint and outcome "
                           "(delivered, failed: an answer not 2xx, no_answer, not_sent: the endpoint paused)",
                           ["app", "endpoint", "outcome"])
WEBHOOK_ATTEMPT_SECONDS = Histogram("ronda_webhook_attempt_seconds", "Webhook attempts posted, by app and endpoint",
                                    ["app", "endpoint"], buckets=SECONDS)
JOB_SECONDS = Histogram("ronda_job_duration_seconds", "Worker jobs, by kind", ["job"], buckets=SECONDS)


def registry():
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        collected = CollectorRegistry()
        multiprocess.MultiProcessCollector(collected)
        return collected
    return REGISTRY


def exposition(tenants: bool = True) -> tuple[bytes, str]:
    """The text a scrape reads; without `tenants`, no series that names an app."""
    source = registry()
    return generate_latest(source if tenants else _WithoutTenants(source)), CONTENT_TYPE_LATEST


# The families whose series name an app (a tenant's figures): the operator's alone.
TENANT_FAMILIES = frozenset({"ronda_app_requests", "ronda_app_live_games", "ronda_app_webhook_deliveries",
                             "ronda_webhook_attempts", "ronda_webhook_attempt_seconds"})


class _WithoutTenants:
    """A registry's metrics less every tenant's family (and any series that carries an `app` label)."""

    def __init__(self, source):
        self.source = source

    def collect(self):
        return [family for family in self.source.collect() if family.name not in TENANT_FAMILIES
                and not any("app" in sample.labels for sample in family.samples)]


@functools.cache
def series(family, *labels):
    """`family`'s series for these label values, looked up once: prometheus_client's `labels()`
    takes a lock and builds its key on every call, a cost on every request of a storm."""
    return family.labels(*labels)

