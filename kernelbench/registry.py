"""A tiny name -> object registry shared by methods, kernels, datasets, protocols and
learners; its entries come from the plug-in modules (:mod:`kernelbench.plugins`)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

from kernelbench.errors import choices_error

T = TypeVar("T")


class Registry(Generic[T]):
    """Map ids to objects (``@REGISTRY.register("id")`` in a plug-in module, imported
    the first time a registry is queried); an unknown id is one line naming the valid
    ones."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._items: dict[str, T] = {}

    def register(self, name: str) -> Callable[[T], T]:
        def deco(obj: T) -> T:
            self.add(name, obj)
            return obj

        return deco

    def add(self, name: str, obj: T) -> None:
        if name in self._items:
            raise ValueError(f"{self.kind} {name!r} is registered twice")
        self._items[name] = obj

    def _all(self) -> dict[str, T]:
        """The entries, once every plug-in module is imported."""
        from kernelbench.plugins import load

        load()
        return self._items

    def get(self, name: str) -> T:
        try:
            return self._items[name]
        except (KeyError, TypeError):
            pass
        try:
            return self._all()[name]
        except (KeyError, TypeError):
            raise choices_error(self.kind, name, self._items) from None

    def __contains__(self, name: object) -> bool:
        return name in self._all()

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._all()))

    def __len__(self) -> int:
        return len(self._all())

    def names(self) -> list[str]:
        return list(self._all())

    def items(self) -> list[tuple[str, T]]:
        return list(self._all().items())
