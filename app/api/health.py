"""/health/live and /health/ready, for load balancers, orchestrators and compose health checks.

Neither is rate-limited. Ready answers 503 problem+json while the store does not answer.
"""

from flask import current_app
from flask.views import MethodView
from marshmallow import fields

from .common import Blueprint, documents_problems, services
from .schemas import Answer

blp = Blueprint("health", __name__, url_prefix="/health", description="Service health")


class Health(Answer):
    status = fields.String(required=True, metadata={"example": "ok"})
    store = fields.String(required=True, metadata={"description": "redis, redis cluster, or embedded"})


def _health():
    config = current_app.config
    if config["EMBEDDED"] or not config["REDIS_URL"]:
        return {"status": "ok", "store": "embedded"}
    return {"status": "ok", "store": "redis cluster" if config["REDIS_CLUSTER_URL"] else "redis"}


@blp.route("/live")
class Live(MethodView):
    @blp.doc(operationId="getLiveness")
    @blp.response(200, Health)
    def get(self):
        """Check that the process answers (without touching the store)

        For liveness probes: 200 while the process serves requests.
        """
        return _health()


@blp.route("/ready")
class Ready(MethodView):
    @blp.doc(operationId="getReadiness")
    @blp.response(200, Health)
    @documents_problems(blp, rate_limited=False)
    def get(self):
        """Check that the service can serve: its store answers

        For readiness probes and load balancers: 200 when Redis answers, else 503.
        """
        services().store.ping()
        return _health()
