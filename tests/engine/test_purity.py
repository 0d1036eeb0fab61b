"""The rules engine imports only the standard library (STYLE.md §1, ARCHITECTURE.md)."""

import ast
import subprocess
import sys
from pathlib import Path

ENGINE = Path(__file__).resolve().parents[2] / "games" / "engine"


def test_nothing_under_games_engine_imports_django_or_the_project() -> None:
    stdlib = sys.stdlib_module_names
    offenders = []
    for path in ENGINE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            for name in names:
                top = name.split(".")[0]
                if top not in stdlib and not name.startswith("games.engine"):
                    offenders.append(f"{path.name}: {name}")
    assert offenders == []


def test_importing_the_engine_loads_no_django_module() -> None:
    code = (
        "import sys, games.engine.comet, games.engine.commere, games.engine.verify, "
        "games.engine.simulate; print(any(m.startswith('django') for m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
