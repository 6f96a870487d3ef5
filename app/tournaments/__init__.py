"""Tournaments of bots: round robin and Swiss, on the machinery of bot matches (docs/tournaments.md)."""
