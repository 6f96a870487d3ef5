"""The notices a player gets, each on their stream and long poll and, for a player of an app, as a
webhook event to the app's endpoints that take it."""

NOTICE_TYPES = ("your_turn", "turn_reminder", "turn_timeout", "game_over", "seat_taken", "matched", "ticket_expired",
                "rematch_offered", "rematch_declined", "tournament_round", "opponent_absent", "seat_left",
                "tournament_started", "tournament_over")
