"""Quick play: tickets that meet in a pool and become a game (docs/matchmaking.md)."""
