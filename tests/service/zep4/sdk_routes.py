"""Every route the installed ``zep-cloud`` 4.x SDK sends, read from its generated raw clients: one
JSON list of ``[method, path, call]`` (``path`` relative to the base URL, parameters as ``{name}``).
Run by tests/service/test_zep_v4_units.py inside .venv-zep4."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import zep_cloud


def routes() -> list[list[str]]:
    root = Path(zep_cloud.__file__).parent
    found = []
    for source in sorted(root.rglob("raw_client.py")):
        client = ".".join(source.parent.relative_to(root).parts)
        for cls in ast.parse(source.read_text()).body:
            if not isinstance(cls, ast.ClassDef) or cls.name.startswith("Async"):
                continue
            for method in cls.body:
                if isinstance(method, ast.FunctionDef) and not method.name.startswith("_"):
                    found += _requests(method, f"{client}.{method.name}")
    return found


def _requests(method: ast.FunctionDef, call: str) -> list[list[str]]:
    for node in ast.walk(method):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "request" and node.args:
            verb = next(ast.literal_eval(k.value) for k in node.keywords if k.arg == "method")
            path = re.sub(r"\{encode_path_param\((\w+)\)\}", r"{\1}", ast.unparse(node.args[0]))
            return [[verb, path.strip("f'\""), call]]
    return []


if __name__ == "__main__":
    print(json.dumps(routes()))
