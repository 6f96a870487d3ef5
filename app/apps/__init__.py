"""Apps: the third-party clients one deployment serves, each with its own players, games, lists,
tickets and ladders (scope.py), quotas and keys (service.py), and signed webhooks (webhooks.py)."""
