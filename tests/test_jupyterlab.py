"""The README's set-up brings JupyterLab, and JupyterLab opens the notebooks it lists."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
import tomllib
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_the_notebook_extra_brings_jupyterlab() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    extras = project["project"]["optional-dependencies"]
    assert any(req.startswith("jupyterlab") for req in extras["notebook"])
    assert any("notebook" in req for req in extras["dev"] if req.startswith("surveykit["))


def test_the_readme_says_how_to_open_the_notebooks() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert re.search(r"jupyter lab notebooks/", readme)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@pytest.fixture
def jupyterlab(tmp_path: Path) -> Iterator[tuple[str, str]]:
    port, token = _free_port(), "surveykit-test"
    env = {**os.environ, "JUPYTER_CONFIG_DIR": str(tmp_path / "cfg"),
           "JUPYTER_RUNTIME_DIR": str(tmp_path / "rt"), "JUPYTER_DATA_DIR": str(tmp_path / "data")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab", "--no-browser", "--allow-root", "--ip=127.0.0.1",
         f"--ServerApp.port={port}", "--ServerApp.port_retries=0",
         f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={ROOT / 'notebooks'}"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                httpx.get(f"{base}/api", timeout=1)
                break
            except httpx.TransportError:
                assert proc.poll() is None, "jupyter lab exited"
                time.sleep(0.2)
        yield base, token
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def test_jupyterlab_serves_the_report_notebook(jupyterlab: tuple[str, str]) -> None:
    base, token = jupyterlab
    headers = {"Authorization": f"token {token}"}
    lab = httpx.get(f"{base}/lab", headers=headers, timeout=30)
    assert lab.status_code == 200 and "JupyterLab" in lab.text
    notebook = httpx.get(f"{base}/api/contents/09_report.ipynb", headers=headers, timeout=30)
    assert notebook.status_code == 200
    assert notebook.json()["type"] == "notebook"
