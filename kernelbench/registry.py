"""A tiny name -> object registry shared by methods, kernels and datasets."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

from kernelbench.errors import choices_error

T = TypeVar("T")


class Registry(Generic[T]):
    """Map ids to objects; unknown ids raise one line naming the valid choices.

    Adding an entry is one decorator (``@REGISTRY.register("id")``) in the new
    module plus, for the runner, one YAML file in the matching config group.
    """

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

    def get(self, name: str) -> T:
        try:
            return self._items[name]
        except (KeyError, TypeError):
            raise choices_error(self.kind, name, self._items) from None

    def __contains__(self, name: object) -> bool:
        return name in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def names(self) -> list[str]:
        return list(self._items)

    def items(self) -> list[tuple[str, T]]:
        return list(self._items.items())
