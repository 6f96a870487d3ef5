"""/admin/apps (the operator's, with the operator key) and /apps/me (an app's server's, with its
server key in X-Ronda-App): apps, their keys and quotas, and their signed webhooks (docs/apps.md)."""

import hashlib
import hmac

from flask import current_app, url_for
from flask.views import MethodView
from marshmallow import Schema, fields, validate

from ..apps.service import CLIENT, KEY_PREFIXES
from ..apps.webhooks import ENDPOINT_DISABLED, STATUSES
from ..errors import OperatorOnly
from ..players.notices import NOTICE_TYPES
from . import idempotency
from .common import bearer_token, documents_problems, services
from .smorest import Blueprint
from .notices import WebhookPayload
from .schemas import Answer, Integer, PersonName
from .tenancy import APP_HEADER, server_app

admin_blp = Blueprint("admin", __name__, url_prefix="/admin/apps",
                      description="The operator's: apps, their keys and quotas (Authorization: Bearer <operator key>)")
blp = Blueprint("apps", __name__, url_prefix="/apps/me",
                description="An app's server's: its quotas and use, and its signed webhooks "
                            "(X-Ronda-App: <server key>)")
OPERATOR: list[dict] = [{"operatorKey": []}]
SERVER_KEY: list[dict] = [{"appServerKey": []}]


class Quotas(Answer):
    requests_per_minute = fields.Integer(required=True, metadata={"description": "0: none"})
    live_games = fields.Integer(required=True, metadata={"description": "open and active games at once; 0: none"})
    players = fields.Integer(required=True, metadata={"description": "players made in the app; 0: none"})
    live_games_per_player = fields.Integer(required=True, metadata={
        "description": "a person's live timed games at once (turns under an hour): a quick-play ticket meanwhile "
                       "is 409 `live_game_in_play`; 0: none"})
    rated_min_games = fields.Integer(required=True, metadata={
        "description": "finished games a player has played before their first rated one (403 `rated_play_locked`)"})
    rated_min_account_seconds = fields.Integer(required=True, metadata={
        "description": "how old a player's account is before their first rated game (403 `rated_play_locked`)"})
    players_per_address_hour = fields.Integer(required=True, metadata={
        "description": "players made with the client key from one address in an hour (429 `players_per_address`)"})
    players_per_key_hour = fields.Integer(required=True, metadata={
        "description": "players made with the client key in an hour, all addresses (429 `players_per_key`)"})
    client_creates_players = fields.Integer(required=True, metadata={
        "description": "1: the client key makes players (createPlayer); 0: only the app's server does (sign-in)"})
    analyses_per_hour = fields.Integer(required=True, metadata={
        "description": "game analyses asked for in an hour (429 `analyses`; 0: no cap)"})


class QuotasRequest(Schema):
    requests_per_minute = Integer(validate=validate.Range(min=0))
    live_games = Integer(validate=validate.Range(min=0))
    players = Integer(validate=validate.Range(min=0))
    live_games_per_player = Integer(validate=validate.Range(min=0))
    rated_min_games = Integer(validate=validate.Range(min=0))
    rated_min_account_seconds = Integer(validate=validate.Range(min=0))
    players_per_address_hour = Integer(validate=validate.Range(min=0))
    players_per_key_hour = Integer(validate=validate.Range(min=0))
    client_creates_players = Integer(validate=validate.OneOf((0, 1)))
    analyses_per_hour = Integer(validate=validate.Range(min=0))


class AppKeyState(Answer):
    kind = fields.String(required=True, validate=validate.OneOf(("client", "server", "both")), metadata={
        "description": "client, server, or both: a key made before the two kinds, until the app's first server key"})
    expires_at = fields.Float(allow_none=True, required=True, metadata={
        "description": "null: a current key; else a rotated key's end of grace (seconds since the epoch)"})


class App(Answer):
    id = fields.String(required=True)
    name = fields.String(required=True)
    created_at = fields.String(required=True)
    revoked_at = fields.String(allow_none=True, required=True)
    quotas = fields.Nested(Quotas, required=True)
    players = fields.Integer(required=True, metadata={"description": "players made so far"})
    keys = fields.List(fields.Nested(AppKeyState), required=True, metadata={"description": "the keys valid now"})


class AppCreated(Answer):
    app = fields.Nested(App, required=True)
    client_key = fields.String(required=True, metadata={
        "description": f"shown once: the app's clients (phones, pages) send it as {APP_HEADER}; safe in a binary"})
    server_key = fields.String(required=True, metadata={
        "description": f"shown once: the app's server sends it as {APP_HEADER} for its webhooks and settings; "
                       "never ship it in a client"})


class AppKeyIssued(Answer):
    app = fields.Nested(App, required=True)
    kind = fields.String(required=True, validate=validate.OneOf(tuple(KEY_PREFIXES)))
    key = fields.String(required=True, metadata={"description": "shown once"})


class CreateAppRequest(Schema):
    name = PersonName(required=True)
    quotas = fields.Nested(QuotasRequest, load_default=dict)


class RotateRequest(Schema):
    kind = fields.String(load_default=CLIENT, validate=validate.OneOf(tuple(KEY_PREFIXES)), metadata={
        "description": "which key to replace: client (default) or server"})
    grace_seconds = Integer(load_default=None, validate=validate.Range(min=0, max=30 * 86400), metadata={
        "description": "how long the keys being replaced still work (default RONDA_APP_KEY_GRACE_SECONDS, a day)"})


class DeliveryCounts(Answer):
    pending = fields.Integer()
    delivered = fields.Integer()
    failed = fields.Integer()


class AppUse(Answer):
    app = fields.Nested(App, required=True)
    live_games = fields.Integer(required=True)
    deliveries = fields.Nested(DeliveryCounts, required=True, metadata={
        "description": "webhook deliveries by status now"})


EVENT_TYPES = (*NOTICE_TYPES, ENDPOINT_DISABLED)


class WebhookRequest(Schema):
    url = fields.Url(required=True, schemes={"http", "https"}, require_tld=False)
    events = fields.List(fields.String(validate=validate.OneOf(EVENT_TYPES)), required=True,
                         validate=validate.Length(min=1), metadata={
                             "description": "your players' notices (" + ", ".join(NOTICE_TYPES) + "), and "
                                            f"{ENDPOINT_DISABLED} (another endpoint of yours was disabled)"})


class WebhookChange(Schema):
    url = fields.Url(schemes={"http", "https"}, require_tld=False)
    events = fields.List(fields.String(validate=validate.OneOf(EVENT_TYPES)), validate=validate.Length(min=1))
    enabled = fields.Boolean(metadata={"description": "false: no delivery is made; true: enabled again (a "
                                                      "disabled endpoint's failing clock starts again)"})


class SecretRotation(Schema):
    grace_seconds = Integer(load_default=24 * 3600, validate=validate.Range(min=0, max=7 * 86400), metadata={
        "description": "how long deliveries are signed with the old secret too (two v1 signatures)"})


class Recovery(Schema):
    since = fields.AwareDateTime(required=True, metadata={
        "description": "every failed delivery made since then is sent again (RFC 3339)"})


class Recovered(Answer):
    queued = fields.Integer(required=True, metadata={"description": "failed deliveries sent again"})


class DeliveriesQuery(Schema):
    status = fields.String(validate=validate.OneOf(STATUSES), metadata={"description": "only these"})


class WebhookEndpoint(Answer):
    id = fields.String(required=True)
    url = fields.String(required=True)
    events = fields.List(fields.String(), required=True)
    created_at = fields.String(required=True)
    enabled = fields.Boolean(required=True)
    disabled_at = fields.String(allow_none=True, required=True, metadata={
        "description": "when it was disabled: by you, or after its attempts all failed for "
                       "RONDA_WEBHOOK_DISABLE_AFTER_SECONDS (5 days; you are sent endpoint_disabled)"})
    failing_since = fields.String(allow_none=True, required=True, metadata={
        "description": "since when every attempt has failed (null: its last attempt was taken)"})
    old_secret_until = fields.String(allow_none=True, required=True, metadata={
        "description": "after a secret rotation: until when deliveries carry the old secret's signature too"})


class WebhookEndpointCreated(WebhookEndpoint):
    secret = fields.String(required=True, metadata={
        "description": "whsec_…, shown once: verify each delivery's webhook-signature with a standardwebhooks library"})


class SecretRotated(Answer):
    endpoint = fields.Nested(WebhookEndpoint, required=True)
    secret = fields.String(required=True, metadata={"description": "the new whsec_…, shown once"})


class DeliveryAttempt(Answer):
    at = fields.String(required=True)
    seconds = fields.Float(required=True)
    status_code = fields.Integer(allow_none=True, required=True, metadata={"description": "null: no answer"})
    error = fields.String()


class Delivery(Answer):
    id = fields.String(required=True, metadata={"description": "the webhook-id header, the same on every attempt"})
    endpoint_id = fields.String(required=True)
    type = fields.String(required=True)
    status = fields.String(required=True, validate=validate.OneOf(("pending", "delivered", "failed")))
    created_at = fields.String(required=True)
    next_attempt_at = fields.String(allow_none=True, required=True)
    attempts = fields.List(fields.Nested(DeliveryAttempt), required=True)
    payload = fields.Nested(WebhookPayload, required=True, metadata={"description": "the body sent"})


def operator():
    configured = current_app.config["OPERATOR_KEY"]
    if not configured or not hmac.compare_digest(bearer_token() or "", configured):
        raise OperatorOnly("send 'Authorization: Bearer <operator key>' (RONDA_OPERATOR_KEY)")



@admin_blp.route("")
class Apps(MethodView):
    @admin_blp.doc(operationId="createApp", security=OPERATOR)
    @admin_blp.arguments(CreateAppRequest, example={"name": "Cafe Ronda", "quotas": {"live_games": 500}})
    @admin_blp.response(201, AppCreated, description="The app; its keys are shown only here")
    @documents_problems(admin_blp, 401, 422)
    def post(self, body):
        """Make an app and its two keys (also `ronda apps create NAME`)

        The client key goes into the app's phone and web clients; the server key stays on the app's
        server (webhooks, deliveries, settings). Send Idempotency-Key to retry safely: a replay
        answers the same keys.
        """
        operator()
        retry_id = idempotency.resource_id()
        app, keys = services().apps.create(body["name"], body["quotas"],
                                           hashlib.sha256(retry_id.encode()).hexdigest()[:12] if retry_id else None)
        return ({"app": app, "client_key": keys["client"], "server_key": keys["server"]},
                {"Location": url_for("admin.AppResource", app_id=app["id"])})

    @admin_blp.doc(operationId="listApps", security=OPERATOR)
    @admin_blp.response(200, App(many=True))
    @documents_problems(admin_blp, 401)
    def get(self):
        """Every app, with its quotas, players and the kinds of its valid keys

        The operator's view of every app: its quotas, its players so far, whether it is
        revoked, and the kinds of its keys valid now (never the keys themselves).
        """
        operator()
        return services().apps.list()


@admin_blp.route("/<app_id>")
class AppResource(MethodView):
    @admin_blp.doc(operationId="getApp", security=OPERATOR)
    @admin_blp.response(200, App)
    @documents_problems(admin_blp, 401, 404)
    def get(self, app_id):
        """An app, with its quotas, players and the kinds of its valid keys

        One app as listApps shows it. 404 for an app that does not exist.
        """
        operator()
        return services().apps.show(app_id)


@admin_blp.route("/<app_id>/quotas")
class AppQuotas(MethodView):
    @admin_blp.doc(operationId="setAppQuotas", security=OPERATOR)
    @admin_blp.arguments(QuotasRequest, example={"live_games": 2000})
    @admin_blp.response(200, App)
    @documents_problems(admin_blp, 401, 404, 422)
    def patch(self, body, app_id):
        """Change an app's quotas (those given; 0: none); they hold within two seconds everywhere

        Only the quotas given change; the others keep their values. Every API process reads
        the new quotas within two seconds (it remembers an app that long).
        """
        operator()
        return services().apps.set_quotas(app_id, body)


@admin_blp.route("/<app_id>/rotate")
class RotateKey(MethodView):
    @admin_blp.doc(operationId="rotateAppKey", security=OPERATOR)
    @admin_blp.arguments(RotateRequest, example={"kind": "server", "grace_seconds": 3600})
    @admin_blp.response(200, AppKeyIssued, description="The new key, shown only here")
    @documents_problems(admin_blp, 401, 404, 422)
    def post(self, body, app_id):
        """A new client or server key; the ones it replaces work for their grace period

        `kind` chooses the key: the client key (default) or the server key. The keys of that
        kind still work for `grace_seconds`, so clients can be updated before the old key
        stops. Send Idempotency-Key to retry safely: a replay answers the same key.
        """
        operator()
        grace = body["grace_seconds"]
        app, key = services().apps.rotate(app_id, body["kind"], current_app.config["APP_KEY_GRACE_SECONDS"]
                                          if grace is None else grace)
        return {"app": app, "kind": body["kind"], "key": key}


@admin_blp.route("/<app_id>/revoke")
class RevokeApp(MethodView):
    @admin_blp.doc(operationId="revokeApp", security=OPERATOR)
    @admin_blp.response(200, App)
    @documents_problems(admin_blp, 401, 404)
    def post(self, app_id):
        """Stop every key of an app at once (its games and players stay, out of reach; restoreApp undoes it)

        Every request with one of its keys is 401 within two seconds, everywhere. Its
        players, games and webhooks are kept; restoreApp undoes it.
        """
        operator()
        return services().apps.revoke(app_id)


@admin_blp.route("/<app_id>/restore")
class RestoreApp(MethodView):
    @admin_blp.doc(operationId="restoreApp", security=OPERATOR)
    @admin_blp.response(200, App)
    @documents_problems(admin_blp, 401, 404)
    def post(self, app_id):
        """Undo a revocation: the keys valid before it work again

        The keys that were valid when the app was revoked work again (a key rotated before
        the revocation keeps its own grace clock). Restoring an app that is not revoked
        changes nothing.
        """
        operator()
        return services().apps.restore(app_id)


@blp.route("")
class Me(MethodView):
    @blp.doc(operationId="getMyApp", security=SERVER_KEY)
    @blp.response(200, AppUse)
    @documents_problems(blp, 401, 403)
    def get(self):
        """Your app: its quotas, players, live games and webhook deliveries by status

        Your app's quotas, how many players it has made, its open and active games now, and
        its webhook deliveries by status (pending, delivered, failed). Takes the server key.
        """
        app_id = server_app()
        return {"app": services().apps.show(app_id), "live_games": services().store.listings.live_count(app_id),
                "deliveries": services().webhooks.counts(app_id)}


@blp.route("/webhooks")
class Webhooks(MethodView):
    @blp.doc(operationId="createWebhook", security=SERVER_KEY)
    @blp.arguments(WebhookRequest, example={"url": "https://example.com/ronda-hook",
                                            "events": ["your_turn", "game_over"]})
    @blp.response(201, WebhookEndpointCreated, description="The endpoint; its secret is shown only here")
    @documents_problems(blp, 401, 403, 422)
    def post(self, body):
        """Register an endpoint for your players' events, signed by Standard Webhooks

        Each delivery is a POST of `{type, timestamp, data}` with `webhook-id`, `webhook-timestamp`
        and `webhook-signature` headers: verify it with a `standardwebhooks` library and the
        secret. At least once (drop repeats by webhook-id), retried for about a day; a
        tournament's notices keep one webhook-id per person and event, even when sent again after
        a fault. A URL on a private network or this machine is a 422 unless the operator allows them.
        """
        retry_id = idempotency.resource_id()
        endpoint = services().webhooks.register(server_app(), body["url"], body["events"],
                                                f"ep_{hashlib.sha256(retry_id.encode()).hexdigest()[:16]}"
                                                if retry_id else None)
        return endpoint, {"Location": url_for("apps.WebhookResource", endpoint_id=endpoint["id"])}

    @blp.doc(operationId="listWebhooks", security=SERVER_KEY)
    @blp.response(200, WebhookEndpoint(many=True))
    @documents_problems(blp, 401, 403)
    def get(self):
        """Your endpoints

        Every endpoint of your app, oldest first: URL, events, whether it is enabled, since
        when it fails, and the grace of a rotated secret. Secrets are never shown again.
        """
        return services().webhooks.endpoints(server_app())


@blp.route("/webhooks/<endpoint_id>")
class WebhookResource(MethodView):
    @blp.doc(operationId="getWebhook", security=SERVER_KEY)
    @blp.response(200, WebhookEndpoint)
    @documents_problems(blp, 401, 403, 404)
    def get(self, endpoint_id):
        """An endpoint

        One endpoint as listWebhooks shows it.
        """
        return services().webhooks.endpoint(server_app(), endpoint_id)

    @blp.doc(operationId="updateWebhook", security=SERVER_KEY)
    @blp.arguments(WebhookChange, example={"url": "https://example.com/ronda-hook-v2", "events": ["game_over"]})
    @blp.response(200, WebhookEndpoint)
    @documents_problems(blp, 401, 403, 404, 422)
    def patch(self, body, endpoint_id):
        """Change an endpoint's URL or events, or disable or enable it; its deliveries stay

        Only the fields given change. Pending deliveries go to the new URL from their next
        attempt. `enabled: false` stops new deliveries; `enabled: true` takes a disabled
        endpoint back, its failing clock started again.
        """
        return services().webhooks.update(server_app(), endpoint_id, body)

    @blp.doc(operationId="deleteWebhook", security=SERVER_KEY)
    @blp.response(204)
    @documents_problems(blp, 401, 403, 404)
    def delete(self, endpoint_id):
        """Remove an endpoint (its pending deliveries fail)

        Its pending deliveries fail at their next attempt; its deliveries stay listed until
        they expire.
        """
        services().webhooks.remove(server_app(), endpoint_id)
        return ""


@blp.route("/webhooks/<endpoint_id>/deliveries")
class Deliveries(MethodView):
    @blp.doc(operationId="listDeliveries", security=SERVER_KEY)
    @blp.arguments(DeliveriesQuery, location="query")
    @blp.response(200, Delivery(many=True))
    @blp.paginate()
    @documents_problems(blp, 401, 403, 404, 422)
    def get(self, query, endpoint_id, pagination_parameters):
        """An endpoint's deliveries, newest first, each with its attempts (paginated; `status` filters)

        Each delivery with its payload, status, next attempt and every attempt's status
        code, error and duration. The newest 1,000 of an endpoint are listed; `status` keeps
        those of one status. Deliveries are made in order on the healthy path; a retry
        reorders them.
        """
        found, total = services().webhooks.deliveries(server_app(), endpoint_id, pagination_parameters.first_item,
                                                      pagination_parameters.page_size, query.get("status"))
        pagination_parameters.item_count = total
        return found


@blp.route("/webhooks/<endpoint_id>/secret")
class WebhookSecret(MethodView):
    @blp.doc(operationId="rotateWebhookSecret", security=SERVER_KEY)
    @blp.arguments(SecretRotation, example={"grace_seconds": 3600})
    @blp.response(200, SecretRotated, description="The new secret, shown only here")
    @documents_problems(blp, 401, 403, 404, 422)
    def post(self, body, endpoint_id):
        """A new signing secret; the old one signs too for its grace

        During the grace every delivery carries two `v1,` signatures in webhook-signature (Standard
        Webhooks allows several): a receiver verifying with either secret accepts it, so it can
        switch to the new one at any time within the grace.
        """
        endpoint, secret = services().webhooks.rotate_secret(server_app(), endpoint_id, body["grace_seconds"])
        return {"endpoint": endpoint, "secret": secret}


@blp.route("/webhooks/<endpoint_id>/test")
class TestEvent(MethodView):
    @blp.doc(operationId="sendTestEvent", security=SERVER_KEY)
    @blp.response(202, Delivery, description="The test delivery, queued")
    @documents_problems(blp, 401, 403, 404)
    def post(self, endpoint_id):
        """Send a `webhook_test` event to one endpoint, signed and retried as any delivery

        Send Idempotency-Key to retry safely.
        """
        return services().webhooks.send_test(server_app(), endpoint_id)


@blp.route("/webhooks/<endpoint_id>/recover")
class Recover(MethodView):
    @blp.doc(operationId="recoverDeliveries", security=SERVER_KEY)
    @blp.arguments(Recovery, example={"since": "2026-12-01T00:00:00Z"})
    @blp.response(202, Recovered)
    @documents_problems(blp, 401, 403, 404, 422)
    def post(self, body, endpoint_id):
        """Send again every failed delivery of an endpoint made since a time (after an outage of yours)

        Every failed delivery made since `since` is sent again with its own webhook-id, as
        resendDelivery would; answers how many.
        """
        return {"queued": services().webhooks.recover(server_app(), endpoint_id, body["since"].timestamp())}


@blp.route("/webhooks/<endpoint_id>/deliveries/<delivery_id>/resend")
class Resend(MethodView):
    @blp.doc(operationId="resendDelivery", security=SERVER_KEY)
    @blp.response(202, Delivery, description="Queued again, with the same webhook-id")
    @documents_problems(blp, 401, 403, 404)
    def post(self, endpoint_id, delivery_id):
        """Send a delivery again (a failed one, or one your server lost)

        A new attempt at once, with the same webhook-id (a receiver that saw it drops the
        repeat), whatever its status was.
        """
        return services().webhooks.resend(server_app(), endpoint_id, delivery_id)
