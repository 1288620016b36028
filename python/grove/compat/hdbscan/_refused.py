"""Stand-ins for the parts of the ``hdbscan`` library grove does not
provide: importable under the library's names, refusing every call with
``grove.UnsupportedError`` naming the library."""
from __future__ import annotations

from typing import Any, Callable, NoReturn

from ..._errors import UnsupportedError


def refusal(module: str, name: str, why: str) -> Callable[..., NoReturn]:
    """A function named `name` that raises, saying that hdbscan's
    `module`.`name` is not in grove and why."""

    def refuse(*args: Any, **kwargs: Any) -> NoReturn:
        raise UnsupportedError(f"{module}.{name}: {why}; use the hdbscan library itself for it")

    refuse.__name__ = refuse.__qualname__ = name
    refuse.__doc__ = f"Not provided by grove ({why}): raises grove.UnsupportedError."
    return refuse
