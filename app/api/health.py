"""/health/live and /health/ready, for load balancers, orchestrators and compose health checks.

Neither is rate-limited. Ready answers 503 problem+json while the store does not answer.
"""

from flask import current_app
from flask.views import MethodView
from marshmallow import fields, validate

from .common import documents_problems, services
from .smorest import Blueprint
from .schemas import Answer

blp = Blueprint("health", __name__, url_prefix="/health", description="Service health")


class Health(Answer):
    status = fields.String(required=True, validate=validate.OneOf(("ok", "degraded")), metadata={
        "example": "ok", "description": "degraded: the service answers, but some writes cannot be (see reasons)"})
    store = fields.String(required=True, metadata={
        "description": "redis, redis cluster, embedded (the redis-server of `ronda serve`), or in-process "
                       "(games lost on restart)"})
    reasons = fields.List(fields.String(), metadata={"description": "why it is degraded, and what fails meanwhile"})


def health_of(config, reasons: list[str] | None = None) -> dict:
    """The health a probe is answered, for this process's configuration."""
    store = ("embedded" if config["EMBEDDED"] else "in-process" if not config["REDIS_URL"]
             else "redis cluster" if config["REDIS_CLUSTER_URL"] else "redis")
    if reasons:
        return {"status": "degraded", "store": store, "reasons": reasons}
    return {"status": "ok", "store": store}


@blp.route("/live")
class Live(MethodView):
    @blp.doc(operationId="getLiveness")
    @blp.response(200, Health)
    def get(self):
        """Check that the process answers (without touching the store)

        For liveness probes: 200 while the process serves requests.
        """
        return health_of(current_app.config)


@blp.route("/ready")
class Ready(MethodView):
    @blp.doc(operationId="getReadiness")
    @blp.response(200, Health)
    @documents_problems(blp, rate_limited=False)
    def get(self):
        """Check that the service can serve: its store answers

        For readiness probes and load balancers: 200 when Redis answers, else 503. `degraded`
        (the store, not this process: it stays in rotation) while the store takes no writes (full
        at its maxmemory, read-only), or, with write replicas asked for (RONDA_WRITE_REPLICAS),
        while a master has fewer replicas whose sync is online: those writes answer 503.
        """
        return readiness(services().store, current_app.config)


def readiness(store, config) -> dict:
    """Whether this process can serve: its store answers (else StoreUnavailable), and what degrades it."""
    store.ping()
    refusal = store.write_refusal()
    return health_of(config, [*store.replication_gaps(), *([refusal] if refusal else [])])
