"""The source digest of a part of a library borrowed past its public API (flask-smorest by
app/api/smorest.py, rq by workers/runner.py), as their `BORROWED` tables record it."""

import hashlib
import inspect
from types import ModuleType


def source_digest(library: ModuleType, name: str) -> str:
    """The first 16 hex digits of the SHA-256 of `library.name`'s source (`name` dotted)."""
    found = library
    for attribute in name.split("."):
        found = getattr(found, attribute)
    return hashlib.sha256(inspect.getsource(found).encode()).hexdigest()[:16]
