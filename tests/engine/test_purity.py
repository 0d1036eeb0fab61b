"""The rules engine imports only the standard library (STYLE.md §1, ARCHITECTURE.md).

One exception, named here: the verifier checks receipts' Ed25519 signatures with the
``cryptography`` package, imported inside that one function, only when receipts are given."""

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
    assert offenders == [f"verify.py: {m}" for m in LAZY_CRYPTOGRAPHY]


LAZY_CRYPTOGRAPHY = ["cryptography.exceptions", "cryptography.hazmat.primitives.asymmetric.ed25519"]


def test_the_signature_check_imports_cryptography_only_when_called() -> None:
    source = (ENGINE / "verify.py").read_text()
    tree = ast.parse(source)
    check = next(n for n in ast.walk(tree)
                 if isinstance(n, ast.FunctionDef) and n.name == "_signature_ok")
    inside = {n.module for n in ast.walk(check) if isinstance(n, ast.ImportFrom)}
    assert inside == set(LAZY_CRYPTOGRAPHY)
    code = "import sys, games.engine.verify; print(any(m.startswith('cryptography') " \
           "for m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_importing_the_engine_loads_no_django_module() -> None:
    code = (
        "import sys, games.engine.comet, games.engine.commere, games.engine.verify, "
        "games.engine.simulate; print(any(m.startswith('django') for m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
