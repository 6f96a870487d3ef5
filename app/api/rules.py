"""/rules: the presets and their options, for clients' create screens."""

from flask.views import MethodView

from ..engine import PRESETS
from . import schemas as s
from .common import Blueprint

blp = Blueprint("rules", __name__, url_prefix="/rules", description="Rule presets (RULES.md §8)")


@blp.route("/presets")
class Presets(MethodView):
    @blp.doc(operationId="listPresets")
    @blp.response(200, s.Preset(many=True))
    def get(self):
        """List the rule presets with every option"""
        return [{"name": name, "players": list(rules.player_counts()), "options": rules.to_dict()}
                for name, rules in PRESETS.items()]
