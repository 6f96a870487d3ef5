"""A person's account across the rooms: suspension, export and erasure (service.py)."""
