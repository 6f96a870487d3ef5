"""Typed errors of the rules engine. The HTTP layer maps each `code` to a status once."""


class RondaError(ValueError):
    code = "ronda_error"

    def __init__(self, message: str, **details: object) -> None:
        super().__init__(message)
        self.message = message
        self.details = details


class InvalidRules(RondaError):
    """A rules request that cannot be dealt or played; `option` names the culprit."""

    code = "invalid_rules"

    def __init__(self, option: str, message: str):
        super().__init__(f"{option}: {message}", option=option)
        self.option = option


class InvalidSetup(RondaError):
    """A game set-up (deck, seed, dealer) that the rules cannot use."""

    code = "invalid_setup"

    def __init__(self, field: str, message: str):
        super().__init__(f"{field}: {message}", field=field)
        self.field = field


class InvalidAction(RondaError):
    """An action that is not even well formed (unknown type, unknown card id)."""

    code = "invalid_action"


class IllegalAction(RondaError):
    """A well-formed action that the rules do not allow now."""

    code = "illegal_action"


class NotYourTurn(IllegalAction):
    code = "not_your_turn"


class CardNotInHand(IllegalAction):
    code = "card_not_in_hand"


class DeclarationNotHeld(IllegalAction):
    code = "declaration_not_held"


class GameOver(IllegalAction):
    code = "game_over"
