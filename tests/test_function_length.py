"""No function in fabricgen/ over 80 lines without a reason written next to it.

A long function is allowed when the line just above its `def` (or its first decorator) is a
`# long: <reason>` comment; everything else must be split. Static: reads the source only.
"""

from __future__ import annotations

import ast
from pathlib import Path

import fabricgen

LIMIT = 80
PACKAGE = Path(fabricgen.__file__).parent


def _long_functions(source: str) -> list[tuple[str, int, int]]:
    """(name, first line, length) of every function over LIMIT lines without a `# long:` reason."""
    lines = source.splitlines()
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) or node.end_lineno is None:
            continue
        first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
        length = node.end_lineno - node.lineno + 1
        above = lines[first - 2].strip() if first >= 2 else ""
        if length > LIMIT and not above.startswith("# long:"):
            found.append((node.name, node.lineno, length))
    return found


def test_the_scan_finds_a_long_function_and_accepts_a_reason() -> None:
    body = "".join(f"    x{i} = {i}\n" for i in range(LIMIT))
    assert _long_functions(f"def f():\n{body}") == [("f", 1, LIMIT + 1)]
    assert _long_functions(f"# long: one hot loop\ndef f():\n{body}") == []
    assert _long_functions("def g():\n    return 1\n") == []


def test_no_function_in_fabricgen_is_over_80_lines_without_a_reason() -> None:
    offenders = [
        f"{path.relative_to(PACKAGE.parent)}:{line} {name} ({length} lines)"
        for path in sorted(PACKAGE.rglob("*.py"))
        for name, line, length in _long_functions(path.read_text(encoding="utf-8"))
    ]
    assert not offenders, "split these or write `# long: <reason>` above them:\n" + "\n".join(offenders)
