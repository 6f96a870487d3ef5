"""Functions written out as text once, at import, as dataclasses writes `__init__`: for the few
hot paths where a loop over fixed names or positions cost far more than the statements it runs."""

from collections.abc import Callable


def defined(source: str, name: str) -> Callable:
    """The function `name` that the `def` in `source` defines."""
    scope: dict = {}
    exec(source, scope)
    return scope[name]
