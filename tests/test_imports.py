"""No import cycle between surveykit's modules; a function-level import only to defer a heavy one.

Both checks read ``src/`` with ``ast`` once (nothing is imported; parsing the tree is most
of their second) and build the graph of imports between surveykit's modules:

* module level and inside functions alike; an import under ``if TYPE_CHECKING:`` is a type,
  not a dependency, and is skipped; relative imports are resolved;
* ``from package import name`` is an edge to the module that defines ``name``: the
  submodule ``package.name`` if there is one, else the module a lazy package face
  (``_LAZY``, ``_MODULES``: PEP 562) imports ``name`` from, followed from face to face
  (``from surveykit import Codebook`` is an edge to ``surveykit.report._codebook``), else
  the package's ``__init__`` itself, a node like any module (``analysis/__init__.py``
  imports its modules eagerly, so an edge to it is an edge to them);
* importing a module from outside its package runs the package's ``__init__`` first: that
  is an edge to the ``__init__`` too (not from inside the package: it is already running).

:func:`test_no_import_cycle_between_modules` finds the strongly connected components of
that graph: two modules that import each other, however indirectly and even inside a
function, are one concept split in two or a lower module waiting to be drawn out
(``docs/architecture.md``).

:func:`test_function_level_imports_guard_something_heavy` holds the rule for an import
inside a function: it is there to defer a heavy third-party package (:data:`HEAVY`) that the
importing module does not load at its top, so that ``import surveykit``, a light module and
``surveykit --help`` stay fast; or it is one of the layers' allowed exceptions
(:data:`tests.test_layers.EXCEPTIONS`). Every other import of our own modules is at module
top, where a reader (and this graph) sees it.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import pytest

import surveykit
from tests.test_layers import EXCEPTIONS

SRC = Path(surveykit.__file__).parent

HEAVY: frozenset[str] = frozenset({
    # what `import surveykit` and `surveykit --help` must not load (tests/test_public_api.py)
    "pandas", "numpy", "pyarrow", "httpx", "pydantic",
    "starlette", "uvicorn", "aiohttp", "lxml", "matplotlib", "ipywidgets", "IPython",
    "scipy", "statsmodels", "pyreadstat", "openpyxl",
    # tens of milliseconds each, paid only by what uses them
    "phonenumbers", "tqdm", "typer", "rich",
})  # fmt: skip
"""Third-party packages worth deferring: a function-level import may guard one of these."""

LOADS: dict[str, frozenset[str]] = {
    "pandas": frozenset({"numpy", "pyarrow"}),
    "pyarrow": frozenset({"numpy"}),
    "matplotlib": frozenset({"numpy"}),
    "scipy": frozenset({"numpy"}),
    "pyreadstat": frozenset({"numpy"}),
    "openpyxl": frozenset({"numpy", "lxml"}),
    "ipywidgets": frozenset({"IPython"}),
    "httpx": frozenset({"rich"}),
}
"""The heavy packages each heavy package loads itself (``python -c 'import pandas'`` and a
look at ``sys.modules``): a module that imports pandas has numpy already."""

@dataclass(frozen=True)
class Import:
    """One import of surveykit modules: where it is, what it names, inside a function or not."""

    line: int
    module: str  # absolute: ``surveykit.report``
    names: tuple[str, ...] | None  # ``from module import names``; None for ``import module``
    in_function: bool


@dataclass
class Module:
    """What one module imports: surveykit's modules, and third-party packages at its top."""

    name: str
    imports: list[Import] = field(default_factory=list)
    third_party: set[str] = field(default_factory=set)
    lazy: dict[str, str] = field(default_factory=dict)  # a package face's name -> module


def _is_type_checking(test: ast.expr) -> bool:
    return "TYPE_CHECKING" in ast.unparse(test)


def read_module(source: str, name: str, *, package: bool = False) -> Module:
    """The imports of module ``name`` (``package``: its source is an ``__init__.py``)."""
    module = Module(name)
    base = name.split(".") if package else name.split(".")[:-1]

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, ast.stmt | ast.excepthandler | ast.match_case):
                continue  # an expression holds no import statement
            if isinstance(child, ast.If) and _is_type_checking(child.test):
                for other in child.orelse:
                    visit(other, in_function)
                continue
            if isinstance(child, ast.Import):
                for alias in child.names:
                    top = alias.name.split(".")[0]
                    if top == "surveykit":
                        module.imports.append(Import(child.lineno, alias.name, None, in_function))
                    elif not in_function:
                        module.third_party.add(top)
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    parent = base[: len(base) - (child.level - 1)]
                    target = ".".join(parent + ([child.module] if child.module else []))
                else:
                    target = child.module or ""
                names = tuple(alias.name for alias in child.names)
                if target.split(".")[0] == "surveykit":
                    module.imports.append(Import(child.lineno, target, names, in_function))
                elif not in_function and target != "__future__":
                    module.third_party.add(target.split(".")[0])
            inner = in_function or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef)
            visit(child, inner)

    tree = ast.parse(source)
    visit(tree, False)
    for statement in tree.body:  # a lazy face: _LAZY = {"name": "module", ...}
        target = statement.target if isinstance(statement, ast.AnnAssign) else None
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
            target = statement.targets[0]
        value = getattr(statement, "value", None)
        if (
            isinstance(target, ast.Name)
            and target.id in ("_LAZY", "_MODULES")
            and isinstance(value, ast.Dict)
        ):
            for key, item in zip(value.keys, value.values, strict=True):
                if isinstance(key, ast.Constant) and isinstance(item, ast.Constant):
                    module.lazy[str(key.value)] = str(item.value)
    return module


def read_tree(sources: Mapping[str, str], packages: Iterable[str] = ()) -> dict[str, Module]:
    """Modules by name from their sources (``packages``: the names whose source is an __init__)."""
    faces = set(packages)
    return {name: read_module(text, name, package=name in faces) for name, text in sources.items()}


@functools.cache
def read_src() -> dict[str, Module]:
    """Every module of ``src/surveykit``."""
    sources, packages = {}, []
    for path in sorted(SRC.rglob("*.py")):
        parts = path.relative_to(SRC.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
            packages.append(".".join(parts))
        sources[".".join(parts)] = path.read_text(encoding="utf-8")
    return read_tree(sources, packages)


def _defining(modules: Mapping[str, Module], package: str, name: str) -> str:
    """The module ``from package import name`` loads: a submodule, or through lazy faces."""
    seen = set()
    while package not in seen:
        seen.add(package)
        if f"{package}.{name}" in modules:
            return f"{package}.{name}"
        face = modules.get(package)
        if face is None or name not in face.lazy:
            return package
        package = face.lazy[name]
    return package


def _faces_around(modules: Mapping[str, Module], importer: str, target: str) -> list[str]:
    """The package ``__init__``s importing ``target`` runs first (those not around importer)."""
    parts = target.split(".")
    out = []
    for end in range(1, len(parts)):
        package = ".".join(parts[:end])
        inside = importer == package or importer.startswith(package + ".")
        if package in modules and not inside:
            out.append(package)
    return out


def named(modules: Mapping[str, Module], imp: Import) -> list[str]:
    """The modules one import names (``from package import name``: where ``name`` is)."""
    if imp.names is None:
        return [imp.module]
    return list(dict.fromkeys(_defining(modules, imp.module, name) for name in imp.names))


def targets(modules: Mapping[str, Module], module: str, imp: Import) -> list[str]:
    """The modules one import runs: what it names, and the packages around them."""
    out: list[str] = []
    for target in named(modules, imp):
        for each in [*_faces_around(modules, module, target), target]:
            if each != module and each not in out:
                out.append(each)
    return out


def graph(modules: Mapping[str, Module]) -> dict[str, set[str]]:
    """Module -> the modules it imports, module level and inside functions."""
    return {
        name: {t for imp in module.imports for t in targets(modules, name, imp)}
        for name, module in modules.items()
    }


def cycles(edges: Mapping[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []

    def connect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in sorted(edges.get(node, ())):
            if other not in index:
                connect(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.add(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(frozenset(component))

    for node in sorted(edges):
        if node not in index:
            connect(node)
    return found


def loaded_by(modules: Mapping[str, Module], start: Iterable[str]) -> set[str]:
    """The third-party packages importing ``start`` loads (module-level imports, transitively)."""
    todo, seen, packages = list(start), set(), set()
    while todo:
        name = todo.pop()
        if name in seen or name not in modules:
            continue
        seen.add(name)
        module = modules[name]
        packages |= module.third_party
        for imp in module.imports:
            if not imp.in_function:
                todo += targets(modules, name, imp)
    for package in list(packages):
        packages |= LOADS.get(package, frozenset())
    return packages


def _package(module: str) -> str:
    parts = module.split(".")
    return "__init__" if len(parts) == 1 else parts[1]


def unguarded(modules: Mapping[str, Module]) -> list[str]:
    """``module:line imports target`` for each function-level import that defers nothing heavy."""
    problems = []
    for name, module in modules.items():
        own: set[str] | None = None
        for imp in module.imports:
            runs = targets(modules, name, imp)
            if not imp.in_function or not runs:
                continue
            own = loaded_by(modules, [name]) if own is None else own
            if all((_package(name), _package(target)) in EXCEPTIONS for target in runs):
                continue
            if not (loaded_by(modules, runs) - own) & HEAVY:
                problems.append(f"{name}:{imp.line} imports {', '.join(named(modules, imp))}")
    return problems


# ---------------------------------------------------------------------------------- the tree


def test_no_import_cycle_between_modules() -> None:
    modules = read_src()
    assert len(modules) > 200  # the walk reads the whole tree
    assert [sorted(c) for c in cycles(graph(modules))] == []


def test_function_level_imports_guard_something_heavy() -> None:
    assert unguarded(read_src()) == []


# ---------------------------------------------------------------------------------- the checks


@pytest.mark.parametrize(
    ("sources", "packages", "cycle"),
    [
        (
            {
                "surveykit.x.a": "from surveykit.x.b import f\n",
                "surveykit.x.b": "def g():\n    from surveykit.x.a import h\n",
            },
            [],
            {"surveykit.x.a", "surveykit.x.b"},
        ),
        (
            {
                "surveykit.x.a": "import surveykit.x.b\n",
                "surveykit.x.b": "from surveykit.x import c\n",
                "surveykit.x.c": "def f():\n    from .a import g\n",
                "surveykit.x.d": "from surveykit.x.a import g\n",
            },
            [],
            {"surveykit.x.a", "surveykit.x.b", "surveykit.x.c"},
        ),
        (
            {
                "surveykit.x": '_LAZY: dict[str, str] = {"Thing": "surveykit.x.b"}\n',
                "surveykit.x.a": "from surveykit.x import Thing\n",
                "surveykit.x.b": "def f():\n    import surveykit.x.a\n",
            },
            ["surveykit.x"],
            {"surveykit.x.a", "surveykit.x.b"},
        ),
        (
            {
                "surveykit.y": "from surveykit.y._b import B\n",
                "surveykit.y._b": "def f():\n    from surveykit.x.a import g\n",
                "surveykit.x.a": "from surveykit.y._c import C\n",
                "surveykit.y._c": "X = 1\n",
            },
            ["surveykit.y"],
            {"surveykit.y", "surveykit.y._b", "surveykit.x.a"},
        ),
    ],
    ids=[
        "two-modules-one-in-a-function",
        "three-modules-relative",
        "through-a-lazy-face",
        "through-an-eager-package-init",
    ],
)
def test_the_check_finds_a_cycle(
    sources: dict[str, str], packages: list[str], cycle: set[str]
) -> None:
    assert cycles(graph(read_tree(sources, packages))) == [frozenset(cycle)]


@pytest.mark.parametrize(
    "sources",
    [
        {
            "surveykit.x.a": (
                "from typing import TYPE_CHECKING\n"
                "if TYPE_CHECKING:\n    from surveykit.x.b import B\n"
            ),
            "surveykit.x.b": "from surveykit.x.a import f\n",
        },
        {
            "surveykit.x.a": (
                "import typing as _typing\n"
                "if _typing.TYPE_CHECKING:\n    import surveykit.x.b\nelse:\n    import json\n"
            ),
            "surveykit.x.b": "def f():\n    from surveykit.x.a import f\n",
        },
        {
            "surveykit.x": "from surveykit.x.a import A\n",
            "surveykit.x.a": "from surveykit.x.b import B\n",
            "surveykit.x.b": "import json\n",
        },
    ],
    ids=["type-checking", "typing-dot-type-checking", "siblings-under-an-eager-init"],
)
def test_the_check_lets_a_type_only_import_pass(sources: dict[str, str]) -> None:
    assert cycles(graph(read_tree(sources, ["surveykit.x"]))) == []


@pytest.mark.parametrize(
    "sources",
    [
        {
            "surveykit.x.a": "import json\ndef f():\n    from surveykit.x.b import g\n",
            "surveykit.x.b": "import pandas as pd\n",
        },
        {
            "surveykit.x.a": "import pandas\ndef f():\n    from surveykit.x.b import g\n",
            "surveykit.x.b": "from surveykit.x.c import h\n",
            "surveykit.x.c": "from lxml import etree\n",
        },
        {
            "surveykit": '_LAZY: dict[str, str] = {"Thing": "surveykit.x.b"}\n',
            "surveykit.x.a": "def f():\n    from surveykit import Thing\n",
            "surveykit.x.b": "import matplotlib.pyplot as plt\n",
        },
        {
            "surveykit.client._base": "def f():\n    from surveykit.sandbox import Sandbox\n",
            "surveykit.sandbox": "import importlib\n",
        },
    ],
    ids=["guards-pandas", "guards-lxml-transitively", "through-the-lazy-face", "a-layer-exception"],
)
def test_a_function_level_import_that_defers_a_heavy_one_passes(
    sources: dict[str, str],
) -> None:
    assert unguarded(read_tree(sources, ["surveykit", "surveykit.sandbox"])) == []


@pytest.mark.parametrize(
    ("sources", "problem"),
    [
        (
            {
                "surveykit.x.a": "import json\ndef f():\n    from surveykit.x.b import g\n",
                "surveykit.x.b": "import re\n",
            },
            "surveykit.x.a:3 imports surveykit.x.b",
        ),
        (
            {
                "surveykit.x.a": "import pandas\n\ndef f():\n    import surveykit.x.b\n",
                "surveykit.x.b": "import pandas\nimport numpy\n",
            },
            "surveykit.x.a:4 imports surveykit.x.b",
        ),
        (
            {
                "surveykit": "from surveykit.errors import E\n",
                "surveykit.errors": "class E(Exception): ...\n",
                "surveykit.cli._x": "def f():\n    import surveykit as sk\n",
            },
            "surveykit.cli._x:2 imports surveykit",
        ),
        (
            {
                "surveykit.x.a": "def f():\n    from .b import g\n",
                "surveykit.x.b": "if TYPE_CHECKING:\n    import pandas\n",
            },
            "surveykit.x.a:2 imports surveykit.x.b",
        ),
    ],
    ids=["nothing-heavy", "heavy-already-loaded", "the-package-face", "heavy-only-for-types"],
)
def test_the_check_sees_a_function_level_import_that_defers_nothing(
    sources: dict[str, str], problem: str
) -> None:
    assert unguarded(read_tree(sources, ["surveykit"])) == [problem]
