"""Re-execute the example notebooks in place, so their stored outputs are current.

    python tools/run_notebooks.py                 # every notebook in notebooks/
    python tools/run_notebooks.py notebooks/01_quickstart.ipynb

Runs each notebook top to bottom in a fresh kernel of this interpreter (nbclient), without
timing metadata or widget state, so a re-run changes only what really changed.
"""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent


def run(path: Path) -> None:
    notebook = nbformat.read(path, as_version=4)
    notebook.metadata["kernelspec"] = {
        "name": "python3", "display_name": "Python 3", "language": "python"}
    client = NotebookClient(
        notebook,
        timeout=600,
        kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}},
        record_timing=False,
        store_widget_state=False,
    )
    client.execute()
    for cell in notebook.cells:
        cell.metadata.pop("execution", None)
    nbformat.write(notebook, path)
    print(f"ran {path.relative_to(ROOT)}")


def main(argv: list[str]) -> None:
    paths = [Path(a).resolve() for a in argv] or sorted((ROOT / "notebooks").glob("*.ipynb"))
    for path in paths:
        run(path)


if __name__ == "__main__":
    main(sys.argv[1:])
