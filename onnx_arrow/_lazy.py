"""Names a module exports but imports on first use (PEP 562), from a table it spells out.

``import onnx_arrow`` and ``onnx-arrow --help`` then cost what they use: the value
conversions import onnx (and, through it, ml_dtypes, about a second here) only when
one of them is first looked up.  A module lists those names twice, side by side: as
the imports of its ``if TYPE_CHECKING:`` block, which type checkers and the API docs
read, and as a table ``{module: names}`` handed to :func:`exports`, which is what runs
(as polars' ``dependencies.py`` does).  Nothing is read from the module's source, so a
zipped or sourceless install works; a test checks that the block and the table agree.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.abc
import importlib.util
import sys
import threading
from collections.abc import Callable, Mapping
from typing import Any, cast


def exports(
    module: str, table: Mapping[str, tuple[str, ...]]
) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """A ``__getattr__`` and ``__dir__`` for ``module``: each name of ``table``
    (``{module it comes from: names}``) is imported from there when first looked up,
    and then kept in the module's namespace, so each is imported once."""
    where = {name: source for source, names in table.items() for name in names}

    def __getattr__(name: str) -> object:
        source = where.get(name)
        if source is None:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(source), name)
        setattr(sys.modules[module], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[module])) | set(where))

    return __getattr__, __dir__


def register_with(module: str, registry: str, *, package: str) -> None:
    """Import ``registry`` once ``module`` is imported and no import of ``package``'s
    modules is under way: now if that holds already, else as soon as it does.

    ``import onnx_arrow`` registers the Arrow extension types with pyarrow this way, so that
    a Parquet file or IPC stream read after it comes back typed, while a process that never
    imports pyarrow (``onnx-arrow --version``) never pays for it.  Waiting for the package's
    imports to end keeps the registry from being imported while one of the modules it
    needs is itself half imported (one of them importing pyarrow).  The hook is one entry
    of ``sys.meta_path`` that finds nothing itself: it wraps the loaders the finders after
    it give for ``module`` and the package's modules, and takes itself out once it has
    imported the registry.
    """
    hook = _Registrar(module, registry, package)
    if module in sys.modules:
        hook.register()
    else:
        sys.meta_path.insert(0, hook)


class _Registrar(importlib.abc.MetaPathFinder):
    """The finder of :func:`register_with`."""

    def __init__(self, module: str, registry: str, package: str) -> None:
        self.module, self.registry, self.prefix = module, registry, package + "."
        self.importing = threading.local()  # this thread's package imports under way
        self.done = False

    def register(self) -> None:
        self.done = True
        with contextlib.suppress(ValueError):
            sys.meta_path.remove(self)
        importlib.import_module(self.registry)

    def find_spec(self, name: str, path: Any, target: Any = None) -> Any:
        ours = name.startswith(self.prefix)
        if self.done or not (ours or name == self.module):
            return None
        for finder in sys.meta_path:  # the spec the other finders give
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                break
        else:
            return None
        loader = spec.loader
        if loader is None or not hasattr(loader, "exec_module"):
            return spec
        spec.loader = cast(importlib.abc.Loader, _Wrapped(loader, self, ours))  # duck-typed
        return spec

    def ran(self, module: Any, loader: Any, ours: bool) -> None:
        """After a module ran: its loader put back, the registry imported if it is time."""
        module.__loader__ = loader  # as if the wrapper had never been there
        if module.__spec__ is not None:
            module.__spec__.loader = loader
        if not self.done and not getattr(self.importing, "depth", 0) and self.module in sys.modules:
            self.register()


class _Wrapped:
    """A loader of the finders after :class:`_Registrar`, its import counted; everything
    else it is asked (``get_code`` for ``python -m``, ``get_resource_reader``) its own."""

    def __init__(self, loader: Any, hook: _Registrar, ours: bool) -> None:
        self.loader, self.hook, self.ours = loader, hook, ours

    def __getattr__(self, name: str) -> Any:
        return getattr(self.loader, name)

    def create_module(self, spec: Any) -> Any:
        return self.loader.create_module(spec)

    def exec_module(self, module: Any) -> None:
        importing = self.hook.importing
        importing.depth = getattr(importing, "depth", 0) + self.ours
        try:
            self.loader.exec_module(module)
        finally:
            importing.depth -= self.ours
        self.hook.ran(module, self.loader, self.ours)
