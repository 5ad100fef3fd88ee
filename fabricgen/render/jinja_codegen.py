"""Jinja code generators that compile the same templates to cheaper Python.

A config renders ~1,000 pieces per switch: Jinja 3.1 compiles each `{{ x }}` and each run of
text between tags to its own `yield`, and each `x.y` to a call of `Environment.getattr`. At
5,120 switches that is millions of generator steps and Python calls for text that only
formats plan data. The generators here change how a template is compiled, not what it
means: the same text, the same errors, the same undefined handling.

- `MergedOutputCodeGenerator` compiles the text and values between two tags into one
  string (`yield f'interface {v0!s}\\n   description {v1!s}\\n'`), values evaluated in the
  same order; `!s` is the `str()` Jinja itself applies. Safe for the sandbox, which
  guards attribute access and calls, not output.
- `DirectAttributeCodeGenerator`, for trusted templates only (a sandbox's `getattr` is its
  security check), also compiles attribute access to what `Environment.getattr` tries
  first, Python's own attribute lookup:
  - a printed value or an `{% if %}` test made only of attribute chains on variables
    (`interface.name`, `interface.roce and qos.load_interval`) becomes plain Python
    (`l_1_interface.name`) inside a `try`. Where that raises AttributeError (a dict's key
    such as `platform.names.route_map`, or an undefined variable), the spot is marked and
    runs Jinja's own code, that time and every time after: the exception is paid once;
  - any other `x.y` becomes `getattr(x, 'y', missing)`, with the item lookup and undefined
    of `Environment.getattr` only when the attribute is absent;
  - a loop filter becomes an `if` in the loop body where that iterates alike (`filter_as_if`).
- `FlatGlobalsTemplate` copies a template's globals into a new context with `dict.update`.

They rely on internals of the pinned Jinja (pyproject.toml); tests/test_template_compiler.py
compares their outcome (text, or error and message) with plain Jinja's on edge cases and on
every built-in file of the examples.
"""

from __future__ import annotations

import keyword
from collections import ChainMap
from collections.abc import Mapping, MutableMapping
from typing import Any

import jinja2
from jinja2 import nodes
from jinja2.compiler import CodeGenerator, Frame, find_undeclared, optimizeconst
from jinja2.runtime import Context, new_context

_VALUE = "_fg_v"
_OBJECT = "_fg_o"
_PIECE = "_fg_out"
_TEST = "_fg_test"
_SLOW = "_fg_slow"
"""Module-level list of the direct sites that raised AttributeError once (then run Jinja's code)."""


class MergedOutputCodeGenerator(CodeGenerator):
    """One `yield` (or buffer append) per output node instead of one per piece."""

    def visit_Output(self, node: nodes.Output, frame: Frame) -> None:
        """Evaluate each value into a local, then emit one f-string of text and values.

        Falls back to Jinja's own output when a value needs more than `str()` (autoescape,
        a `finalize` function) or inside a template that extends another."""
        finalize = self._make_finalize()
        if (
            frame.require_output_check
            or frame.eval_ctx.volatile
            or frame.eval_ctx.autoescape
            or finalize.src is not None
            or self.environment.is_async
        ):
            super().visit_Output(node, frame)
            return
        pieces: list[str] = []
        values: list[tuple[nodes.Node, str]] = []
        for child in node.nodes:
            constant = self._constant(child, frame, finalize)
            if constant is not None:
                pieces.append(repr(constant))
                continue
            local = f"{_PIECE}{len(pieces)}"
            values.append((child, local))
            pieces.append(f"f'{{{local}!s}}'")
        self.hoist(values, frame)
        if pieces:
            text = " ".join(pieces)
            self.writeline(f"yield {text}" if frame.buffer is None else f"{frame.buffer}.append({text})")

    def _constant(self, child: nodes.Expr, frame: Frame, finalize: CodeGenerator._FinalizeInfo) -> str | None:
        """The child's text when known at compile time (as Jinja's own `visit_Output` decides)."""
        if not (finalize.const or isinstance(child, nodes.TemplateData)):
            return None
        try:
            return self._output_child_to_const(child, frame, finalize)
        except Exception:  # Jinja's rule: not constant, or an error easier to debug at run time
            return None

    def hoist(self, values: list[tuple[nodes.Node, str]], frame: Frame) -> None:
        """Emit `local = <expression>` for each value, in order, as Jinja compiles them."""
        for expression, local in values:
            self.writeline(f"{local} = ", expression)
            self.visit(expression, frame)


class DirectAttributeCodeGenerator(MergedOutputCodeGenerator):
    """Python attribute access where it gives what `Environment.getattr` gives (module doc)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.direct_sites = 0

    def visit_Template(self, node: nodes.Template, frame: Frame | None = None) -> None:
        """The module as Jinja writes it, then the list of slow-site marks its code reads."""
        super().visit_Template(node, frame)
        self.writeline(f"{_SLOW} = [False] * {self.direct_sites}")

    def hoist(self, values: list[tuple[nodes.Node, str]], frame: Frame) -> None:
        """Each run of values that have a plain Python form becomes one site: plain Python in a
        `try` while that works there, else Jinja's code; other values as Jinja compiles them."""
        run: list[tuple[nodes.Node, str, str]] = []
        for expression, local in values:
            direct = self._direct(expression, frame)
            if direct is not None:
                run.append((expression, local, direct))
                continue
            self._direct_site(run, frame)
            run = []
            super().hoist([(expression, local)], frame)
        self._direct_site(run, frame)

    def _direct_site(self, run: list[tuple[nodes.Node, str, str]], frame: Frame) -> None:
        if not run:
            return
        site = f"{_SLOW}[{self.direct_sites}]"
        self.direct_sites += 1
        jinja_code = [(expression, local) for expression, local, _ in run]
        self.writeline(f"if {site}:", run[0][0])
        self.indent()
        super().hoist(jinja_code, frame)
        self.outdent()
        self.writeline("else:")
        self.indent()
        self.writeline("try:")
        self.indent()
        for expression, local, direct in run:
            self.writeline(f"{local} = {direct}", expression)
        self.outdent()
        self.writeline("except AttributeError:")
        self.indent()
        self.writeline(f"{site} = True")
        super().hoist(jinja_code, frame)
        self.outdent(2)

    def _direct(self, expression: nodes.Node, frame: Frame) -> str | None:
        """Plain Python for an attribute chain on a variable (with `not`/`and`/`or`), or None.

        A bare variable is left to Jinja: unset, it is `missing`, which Python would print or
        test as a value; under an attribute it only raises AttributeError. Names starting
        with `_` are left too (`missing` and Undefined answer some of them)."""
        if isinstance(expression, nodes.Getattr):
            return self._direct_getattr(expression, frame)
        if isinstance(expression, nodes.Not):
            operand = self._direct(expression.node, frame)
            return None if operand is None else f"(not {operand})"
        if isinstance(expression, (nodes.And, nodes.Or)):
            left, right = self._direct(expression.left, frame), self._direct(expression.right, frame)
            operator = "and" if isinstance(expression, nodes.And) else "or"
            return None if left is None or right is None else f"({left} {operator} {right})"
        return None

    def _direct_getattr(self, expression: nodes.Getattr, frame: Frame) -> str | None:
        attribute = expression.attr
        if attribute.startswith("_") or not attribute.isidentifier() or not attribute.isascii():
            return None
        if keyword.iskeyword(attribute):
            return None
        owner = expression.node
        if isinstance(owner, nodes.Name) and owner.ctx == "load":
            return f"{frame.symbols.ref(owner.name)}.{attribute}"
        inner = self._direct_getattr(owner, frame) if isinstance(owner, nodes.Getattr) else None
        return None if inner is None else f"{inner}.{attribute}"

    def visit_If(self, node: nodes.If, frame: Frame) -> None:
        """Jinja's `if`/`elif`/`else`, each test hoisted into a local first."""
        branches = [(node.test, node.body), *((branch.test, branch.body) for branch in node.elif_)]
        self._branches(branches, node.else_, frame.soft())

    def _branches(self, branches: list[tuple[nodes.Node, list[nodes.Node]]], otherwise: list[nodes.Node], frame: Frame) -> None:
        (test, body), rest = branches[0], branches[1:]
        self.hoist([(test, _TEST)], frame)
        self.writeline(f"if {_TEST}:", test)
        self.indent()
        self.blockvisit(body, frame)
        self.outdent()
        if not (rest or otherwise):
            return
        self.writeline("else:")
        self.indent()
        if rest:
            self._branches(rest, otherwise, frame)
        else:
            self.blockvisit(otherwise, frame)
        self.outdent()

    def visit_For(self, node: nodes.For, frame: Frame) -> None:
        """Jinja's loop, with a filter (`for x in xs if x.port`) as an `if` in the body where
        that iterates alike (see `filter_as_if`): the test is then hoisted like any other."""
        super().visit_For(filter_as_if(node), frame)

    @optimizeconst
    def visit_Getattr(self, node: nodes.Getattr, frame: Frame) -> None:
        """`(v if (v := getattr((o := x), 'y', missing)) is not missing else environment.item_or_undefined(o, 'y'))`.

        `x` is evaluated once; the locals are read right after they are set, so nested and
        repeated accesses can share their names. When no dict has an attribute `y`, a plain
        dict holding key `y` is read first: for it, Jinja's attribute lookup would fail and
        the item is what it returns (`platform.names.route_map`)."""
        if self.environment.is_async:
            super().visit_Getattr(node, frame)
            return
        attribute = repr(node.attr)
        self.write("(")
        if not hasattr(dict, node.attr):
            self.write(f"{_OBJECT}[{attribute}] if type({_OBJECT} := ")
            self.visit(node.node, frame)
            self.write(f") is dict and {attribute} in {_OBJECT} else ")
            self.write(f"{_VALUE} if ({_VALUE} := getattr({_OBJECT}, {attribute}, missing)) is not missing")
        else:
            self.write(f"{_VALUE} if ({_VALUE} := getattr(({_OBJECT} := ")
            self.visit(node.node, frame)
            self.write(f"), {attribute}, missing)) is not missing")
        self.write(f" else environment.item_or_undefined({_OBJECT}, {attribute}))")


def filter_as_if(loop: nodes.For) -> nodes.For:
    """`{% for x in xs if test %}body` as `{% for x in xs %}{% if test %}body`, or `loop` itself
    when the two could differ: an `else` (runs when no item passed), `loop.*` (counts passed
    items), recursion or blocks; and, to be safe, when the test reads a name the body sets.

    Jinja compiles a filter to a generator of its own, a Python call per item; an `if` in the
    body is a hoisted test.

    >>> env = jinja2.Environment()
    >>> body = env.parse("{% for x in xs if x %}{{ x }}{% endfor %}").body[0]
    >>> type(filter_as_if(body).body[0]).__name__
    'If'
    >>> body = env.parse("{% for x in xs if x %}{{ loop.index }}{% endfor %}").body[0]
    >>> filter_as_if(body) is body
    True
    """
    if loop.test is None or loop.else_ or loop.recursive or any(True for _ in loop.find_all(nodes.Block)):
        return loop
    if "loop" in find_undeclared(loop.iter_child_nodes(only=("body", "test")), ("loop",)):
        return loop
    read = {name.name for name in loop.test.find_all(nodes.Name)}
    set_in_body = {name.name for child in loop.body for name in child.find_all(nodes.Name) if name.ctx != "load"}
    if read & set_in_body:
        return loop
    test = nodes.If(loop.test, loop.body, [], [], lineno=loop.test.lineno)
    return nodes.For(loop.target, loop.iter, [test], [], None, False, lineno=loop.lineno)


class FlatGlobalsTemplate(jinja2.Template):
    """A Template whose render copies its globals as one dict, not key by key.

    A template's globals are a `ChainMap` (its own over the environment's), which Jinja copies
    into every new context through ChainMap's Python-level iteration and lookup: a fifth of
    the cost of a short config. Flattening it with `dict.update` gives the same dict."""

    def new_context(self, vars: dict[str, Any] | None = None, shared: bool = False, locals: Mapping[str, Any] | None = None) -> Context:
        return new_context(self.environment, self.name, self.blocks, vars, shared, _flat(self.globals), locals)


def _flat(globals_: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
    """`dict(globals_)`, at C speed for a ChainMap (the first map that has a key wins).

    >>> _flat(ChainMap({"a": 1}, {"a": 2, "b": 3}))
    {'a': 1, 'b': 3}
    """
    if not isinstance(globals_, ChainMap):
        return globals_
    flat: dict[str, Any] = {}
    for layer in reversed(globals_.maps):
        flat.update(layer)
    return flat


class DirectAttributeEnvironment(jinja2.Environment):
    """An environment compiled with `DirectAttributeCodeGenerator`; not for untrusted templates."""

    code_generator_class = DirectAttributeCodeGenerator
    template_class = FlatGlobalsTemplate

    def item_or_undefined(self, obj: Any, attribute: str) -> Any:
        """The rest of `Environment.getattr` once `obj` has no attribute `attribute`: the item of
        that name (a dict's key, as `platform.names.route_map`), else undefined.

        >>> env = DirectAttributeEnvironment()
        >>> env.from_string("{{ names.route_map }} {{ names.items is defined }}").render(names={"route_map": "RM"})
        'RM True'
        """
        try:
            return obj[attribute]
        except (TypeError, LookupError, AttributeError):
            return self.undefined(obj=obj, name=attribute)
