"""Players: people who outlive a seat token. Their tokens, their games, their notices."""
