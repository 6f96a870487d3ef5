"""/rules: the presets and their options, for clients' create screens."""

from flask.views import MethodView

from ..engine import PRESETS
from . import schemas as s
from .common import documents_problems
from .smorest import Blueprint

# One line per preset, for clients' create screens; docs/rules.md says the rest.
SUMMARIES = {
    "classic": "Teams of two at four; four cards to the table; darba streaks; declare on your turn.",
    "traditional": "Four-card hands, no table deal; piles build streaks; everyone declares together.",
    "runda": "Caída streaks; only the highest declaration scores; the winner is settled at the round's end.",
    "simple": "Everyone for themselves; declarations scored automatically; the shortest rules.",
    "elaborate": "Everyone for themselves; four-card hands; the dealer's last card scores.",
}

blp = Blueprint("rules", __name__, url_prefix="/rules",
                description="Rule presets: one per rule source, explained on the rules page (`/static/rules.md`)")


@blp.route("/presets")
class Presets(MethodView):
    @blp.doc(operationId="listPresets")
    @blp.response(200, s.Preset(many=True))
    @documents_problems(blp, store=False)
    def get(self):
        """List the rule presets with every option

        One preset per rule source, each with every option's value: what a create screen offers. The
        rules page explains each option.
        """
        return [{"name": name, "summary": SUMMARIES[name], "players": list(rules.player_counts()),
                 "options": rules.to_dict()}
                for name, rules in PRESETS.items()]
