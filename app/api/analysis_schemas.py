"""What a game's and a match's analyses answer (app/review): shared by the games and matches views."""

from marshmallow import fields, validate

from ..bots.review import EXACT_CARDS, MARKS
from .schemas import Action, Answer

MARK_NAMES = tuple(mark for mark, _ in MARKS)
STATUSES = ("pending", "running", "done", "failed")


class AnalysisOption(Answer):
    action = fields.Nested(Action, required=True)
    value = fields.Float(required=True, metadata={
        "description": "points this option is worth to the seat's camp from here to the round's end (its points "
                       "less the best other camp's), a mean over the worlds that agree with what the seat knew"})
    value_low = fields.Float(required=True, metadata={"description": "`value`'s 95% interval, low"})
    value_high = fields.Float(required=True, metadata={"description": "`value`'s 95% interval, high"})
    win_chance = fields.Float(required=True, metadata={
        "description": "the camp's chance to win the game from where the round ends, the same worlds' mean (0 to 1)"})
    win_chance_low = fields.Float(required=True)
    win_chance_high = fields.Float(required=True)
    all_cards_value = fields.Float(required=True, metadata={
        "description": "the same points with every card seen (the true hands and stock): what was luck, apart"})
    all_cards_win_chance = fields.Float(required=True)


class AnalysedDecision(Answer):
    index = fields.Integer(required=True, metadata={"description": "the game's decisions in order, from 0"})
    event_id = fields.Integer(required=True, metadata={"description": "the last event of the log before it"})
    seat = fields.Integer(required=True)
    camp = fields.Integer(required=True)
    round = fields.Integer(required=True)
    deal = fields.Integer(required=True)
    options = fields.List(fields.Nested(AnalysisOption), required=True, metadata={"description": "every legal one"})
    chosen = fields.Nested(Action, required=True)
    best = fields.Nested(Action, required=True, metadata={"description": "the option of the highest value"})
    loss = fields.Float(required=True, metadata={"description": "points given up: best's value less chosen's"})
    win_chance_loss = fields.Float(required=True, metadata={"description": "the chance to win given up (0 to 1)"})
    mark = fields.String(required=True, validate=validate.OneOf(MARK_NAMES), metadata={
        "description": "by `loss`: " + ", ".join(f"{mark} below {below}" for mark, below in MARKS[:-1]) +
                       f", else {MARKS[-1][0]}; a forced decision is best"})
    forced = fields.Boolean(required=True, metadata={"description": "one legal option"})
    exact = fields.Boolean(required=True, metadata={
        "description": f"the seat knew every hand and at most {EXACT_CARDS} cards were left: searched to the end"})
    worlds = fields.Integer(required=True, metadata={"description": "worlds the values are means over"})


class Marks(Answer):
    best = fields.Integer(required=True)
    good = fields.Integer(required=True)
    inaccuracy = fields.Integer(required=True)
    mistake = fields.Integer(required=True)
    blunder = fields.Integer(required=True)


class SeatAnalysis(Answer):
    seat = fields.Integer(required=True)
    decisions = fields.Integer(required=True)
    choices = fields.Integer(required=True, metadata={"description": "decisions with more than one option: the "
                                                                     "figures below are over these"})
    mean_loss = fields.Float(required=True)
    accuracy = fields.Float(required=True, metadata={
        "description": "0 to 100: the mean of Lichess's move accuracy, 103.1668·exp(−0.04354·L) − 3.1669, L the "
                       "winning chances given up in percent"})
    marks = fields.Nested(Marks, required=True)


class AnalysisProgress(Answer):
    decisions_done = fields.Integer(required=True)
    decisions_total = fields.Integer(allow_none=True, required=True, metadata={"description": "null until started"})


class Analysis(Answer):
    game_id = fields.String(required=True)
    status = fields.String(required=True, validate=validate.OneOf(STATUSES))
    requested_at = fields.String(required=True)
    started_at = fields.String(allow_none=True, required=True)
    finished_at = fields.String(allow_none=True, required=True)
    budget_ms = fields.Float(required=True, metadata={"description": "a decision's time (RONDA_ANALYSIS_BUDGET_MS)"})
    error = fields.String(allow_none=True, required=True, metadata={"description": "failed: why"})
    progress = fields.Nested(AnalysisProgress, required=True)
    decisions = fields.List(fields.Nested(AnalysedDecision), allow_none=True, required=True, metadata={
        "description": "once done: every decision of every seat, forced ones included"})
    seats = fields.List(fields.Nested(SeatAnalysis), allow_none=True, required=True, metadata={
        "description": "once done: each seat's figures"})


class WorstDecision(Answer):
    game_id = fields.String(required=True)
    index = fields.Integer(required=True, metadata={"description": "the decision in that game's analysis"})
    loss = fields.Float(required=True)
    mark = fields.String(required=True, validate=validate.OneOf(MARK_NAMES))
    chosen = fields.Nested(Action, required=True)
    best = fields.Nested(Action, required=True)


class BotAnalysis(Answer):
    entrant = fields.Integer(required=True)
    bot = fields.String(required=True)
    decisions = fields.Integer(required=True)
    choices = fields.Integer(required=True)
    mean_loss = fields.Float(required=True)
    accuracy = fields.Float(required=True)
    marks = fields.Nested(Marks, required=True)
    worst = fields.List(fields.Nested(WorstDecision), required=True, metadata={"description": "its worst, worst first"})


class MatchAnalysis(Answer):
    match_id = fields.String(required=True)
    games = fields.Integer(required=True)
    games_analysed = fields.Integer(required=True)
    games_pending = fields.Integer(required=True)
    games_failed = fields.Integer(required=True)
    bots = fields.List(fields.Nested(BotAnalysis), required=True, metadata={
        "description": "per entrant, over the games analysed so far"})
