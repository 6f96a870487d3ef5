"""/health: liveness and store reachability, for load balancers and compose health checks."""

from flask import current_app
from flask.views import MethodView
from marshmallow import Schema, fields

from .common import Blueprint

blp = Blueprint("health", __name__, url_prefix="/health", description="Service health")


class Health(Schema):
    status = fields.String(required=True, metadata={"example": "ok"})
    store = fields.String(required=True, metadata={"description": "redis, or embedded"})


@blp.route("")
class HealthCheck(MethodView):
    @blp.doc(operationId="getHealth")
    @blp.response(200, Health)
    def get(self):
        """Check that the service and its store answer"""
        current_app.extensions["ronda.store"].redis.ping()
        return {"status": "ok", "store": "redis" if current_app.config["REDIS_URL"] else "embedded"}
