"""Apps: the third-party clients one deployment serves, each with its own players, games, lists,
tickets and ladders (named by app/ops/scope.py), quotas and keys (service.py), and signed webhooks (webhooks.py)."""
