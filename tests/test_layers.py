"""The layers of docs/architecture.md hold: no module imports a package above its own.

Every ``import`` of surveykit's own modules in ``src/`` is read with ``ast`` (module level
and inside functions; an import under ``if TYPE_CHECKING:`` is a type, not a dependency,
and is skipped). A package may import its own modules and the packages of lower layers;
the sandbox, beside the stack, only the foundations, results and report. The few allowed
exceptions are listed in :data:`EXCEPTIONS`, each with its reason, and must stay inside a
function (imported on use).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import pytest

import surveykit

SRC = Path(surveykit.__file__).parent

LAYERS: list[set[str]] = [
    {"errors"},
    {"models", "_util"},
    {"rules"},
    {"results"},
    {"client"},
    {"respondents"},
    {"callbacks"},
    {"optouts"},
    {"batch"},
    {"campaign"},
    {"analysis"},
    {"report", "plots"},
    {"cli", "widgets", "_doctor"},
]
"""Lowest first: a package may import the packages of the layers below its own."""

SANDBOX_USES = {"errors", "models", "_util", "rules", "results", "report"}
"""The sandbox sits beside the stack: it simulates the platform with these, never a client."""

SANDBOX_USERS = {"client", "cli", "widgets", "_doctor"}
"""Who may start a sandbox (the client only on use: see EXCEPTIONS)."""

EXCEPTIONS: dict[tuple[str, str], str] = {
    ("client", "sandbox"): "Client() with nothing configured starts the embedded sandbox",
    ("callbacks", "optouts"): "listen(opt_outs=path) opens the OptOutList at that path",
}
"""Imports against the layers, allowed inside a function only, and why."""

ROOT = {"__init__", "__main__"}
"""The package's face: it re-exports (lazily) and may name anything."""


def _layer(package: str) -> int | None:
    for level, packages in enumerate(LAYERS):
        if package in packages:
            return level
    return None


@dataclass(frozen=True)
class Import:
    """One import of a surveykit module: where it is, what it names, inside a function or not."""

    module: str
    line: int
    target: str
    in_function: bool


def _package(module: str) -> str:
    parts = module.split(".")
    return "__init__" if len(parts) == 1 else parts[1]


def imports_of(source: str, module: str) -> list[Import]:
    """The runtime imports of surveykit modules in ``source`` (TYPE_CHECKING blocks skipped)."""
    found: list[Import] = []

    def walk(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                for other in child.orelse:
                    walk(other, in_function)
                continue
            inner = in_function or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef)
            targets: list[str] = []
            if isinstance(child, ast.ImportFrom) and child.level == 0 and child.module:
                if child.module == "surveykit":
                    targets = [f"surveykit.{alias.name}" for alias in child.names]
                elif child.module.startswith("surveykit."):
                    targets = [child.module]
            elif isinstance(child, ast.Import):
                targets = [a.name for a in child.names if a.name.startswith("surveykit.")]
            for target in targets:
                found.append(Import(module, child.lineno, target, in_function))
            walk(child, inner)

    walk(ast.parse(source), False)
    return found


def problem(imp: Import) -> str | None:
    """Why ``imp`` goes against the layers, or None when it is allowed."""
    source, target = _package(imp.module), _package(imp.target)
    if source == target or source in ROOT:
        return None
    where = f"{imp.module}:{imp.line} imports {imp.target}"
    if (source, target) in EXCEPTIONS:
        if imp.in_function:
            return None
        return f"{where}: allowed only inside a function ({EXCEPTIONS[source, target]})"
    if target in ROOT:
        return None if source in {"cli", "widgets", "_doctor"} else f"{where}: the package face"
    if source == "sandbox":
        return None if target in SANDBOX_USES else f"{where}: the sandbox uses {SANDBOX_USES}"
    if target == "sandbox":
        return None if source in SANDBOX_USERS else f"{where}: only {SANDBOX_USERS} start one"
    mine, theirs = _layer(source), _layer(target)
    if mine is None or theirs is None:
        return f"{where}: a package in no layer (add it to docs/architecture.md and LAYERS)"
    if theirs < mine:
        return None
    return f"{where}: {target} is {'above' if theirs > mine else 'beside'} {source}"


def _all_imports() -> list[Import]:
    found = []
    for path in sorted(SRC.rglob("*.py")):
        relative = path.relative_to(SRC.parent).with_suffix("")
        module = ".".join(relative.parts).removesuffix(".__init__")
        found += imports_of(path.read_text(encoding="utf-8"), module)
    return found


def test_no_module_imports_a_layer_above_its_own() -> None:
    imports = _all_imports()
    assert len(imports) > 300  # the walk reads the whole tree
    assert [p for imp in imports if (p := problem(imp)) is not None] == []


def test_every_package_has_a_layer() -> None:
    packages = {
        path.name.removesuffix(".py")
        for path in SRC.iterdir()
        if (path.is_dir() and (path / "__init__.py").exists()) or path.suffix == ".py"
    }
    placed = set().union(*LAYERS) | {"sandbox"} | ROOT
    assert packages - placed == set()


@pytest.mark.parametrize(
    ("module", "source", "expected"),
    [
        ("surveykit.models.messages", "from surveykit.client import Client", "above"),
        ("surveykit.results._csv", "import surveykit.batch._plan", "above"),
        ("surveykit.callbacks._store", "from surveykit.optouts import OptOutList", "inside"),
        ("surveykit.sandbox._sandbox", "from surveykit.client import Client", "the sandbox"),
        ("surveykit.batch._plan", "from surveykit.sandbox import Sandbox", "only"),
        ("surveykit.batch._plan", "from surveykit.campaign import campaign_status", "above"),
        ("surveykit.report._x", "from surveykit.plots import plot_estimates", "beside"),
    ],
    ids=["models-client", "results-batch", "exception-at-top", "sandbox-client",
         "batch-sandbox", "batch-campaign", "same-layer"],
)
def test_the_check_sees_an_import_against_the_layers(
    module: str, source: str, expected: str
) -> None:
    (imp,) = imports_of(source, module)
    found = problem(imp)
    assert found is not None and expected in found


@pytest.mark.parametrize(
    ("module", "source"),
    [
        ("surveykit.batch._plan", "from surveykit.rules.sms import count_segments"),
        ("surveykit.client._base", "def f():\n    from surveykit.sandbox import Sandbox\n"),
        ("surveykit.errors", "if TYPE_CHECKING:\n    from surveykit.batch import BatchResult\n"),
        ("surveykit.cli._data", "import surveykit"),
    ],
    ids=["downward", "exception-in-function", "type-only", "cli-face"],
)
def test_the_check_lets_an_allowed_import_pass(module: str, source: str) -> None:
    assert all(problem(imp) is None for imp in imports_of(source, module))
