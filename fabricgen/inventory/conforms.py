"""A quick yes to "does this inventory conform to the schema?", without importing jsonschema.

WHY: importing jsonschema (with referencing, attrs and rpds) costs about 0.09 CPU-s, a fifth
of the start-up of every `fabricgen render`, to validate an inventory that is almost always
valid. `conforms` answers only "certainly valid" (True) or "let jsonschema decide" (False):
`schema.validate_document` runs jsonschema, and so writes exactly today's diagnostics, whenever
the answer is False. Every True is a document jsonschema accepts: each keyword below does what
jsonschema 4's keyword of that name does (`_keywords.py`: a keyword ignores instances of other
types, `type` and the other comparisons exactly), or is stricter, where exactness would cost
code (`enum` and `const` need the same type, `uniqueItems` judges strings and integers only);
and a keyword this module does not know makes the answer False, so a schema that grows a new
keyword stays correct, only slower (a test renders every example through the quick path).
`tests/test_schema_conforms.py` compares both on mutated examples and random documents.

>>> schema = {"type": "object", "required": ["name"], "properties": {"name": {"type": "string", "pattern": "^[a-z]+$"}}}
>>> conforms(schema, {"name": "pod"}), conforms(schema, {"name": "Pod"}), conforms(schema, {})
(True, False, False)
>>> conforms({"type": "integer"}, True), conforms({"oneOf": []}, 1)
(False, False)
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable
from typing import Any

Schema = dict[str, Any]
_Keyword = Callable[[Any, Any, Schema], bool]

_ANNOTATIONS = frozenset({"$schema", "$id", "$comment", "title", "description", "default", "examples", "then", "else"})
"""Keywords that constrain nothing by themselves (`then`/`else` are read by `if`)."""


def conforms(schema: Schema | bool, instance: Any) -> bool:
    """True only when `instance` is valid against `schema` as jsonschema's Draft 2020-12
    validator (integers: `int` but not `bool`; format: ipv4) would find it; False means
    "invalid, or not decided here"."""
    if isinstance(schema, bool):
        return schema
    for keyword, value in schema.items():
        if keyword in _ANNOTATIONS:
            continue
        check = _KEYWORDS.get(keyword)
        if check is None or not check(value, instance, schema):
            return False
    return True


def _is_type(instance: Any, name: str) -> bool:
    """jsonschema's types, with fabricgen's integer (a written integer only, never `true`)."""
    if name == "integer":
        return isinstance(instance, int) and not isinstance(instance, bool)
    if name == "number":  # jsonschema takes any numbers.Number; int and float are what YAML gives
        return isinstance(instance, int | float) and not isinstance(instance, bool)
    kind = _PYTHON_TYPES.get(name)
    return kind is not None and isinstance(instance, kind)


_PYTHON_TYPES: dict[str, type | tuple[type, ...]] = {"string": str, "object": dict, "array": list, "boolean": bool, "null": type(None)}


def _type(types: Any, instance: Any, schema: Schema) -> bool:
    return any(_is_type(instance, name) for name in ([types] if isinstance(types, str) else types))


def _properties(properties: Schema, instance: Any, schema: Schema) -> bool:
    if not isinstance(instance, dict):
        return True
    return all(conforms(sub, instance[key]) for key, sub in properties.items() if key in instance)


def _additional_properties(extra: Schema | bool, instance: Any, schema: Schema) -> bool:
    if not isinstance(instance, dict):
        return True
    known = schema.get("properties", {})
    return all(conforms(extra, value) for key, value in instance.items() if key not in known)


def _property_names(names: Schema, instance: Any, schema: Schema) -> bool:
    return not isinstance(instance, dict) or all(conforms(names, key) for key in instance)


def _required(required: list[str], instance: Any, schema: Schema) -> bool:
    return not isinstance(instance, dict) or all(key in instance for key in required)


def _max_properties(limit: int, instance: Any, schema: Schema) -> bool:
    return not isinstance(instance, dict) or len(instance) <= limit


def _items(items: Schema | bool, instance: Any, schema: Schema) -> bool:
    if not isinstance(instance, list):
        return True
    return "prefixItems" not in schema and all(conforms(items, item) for item in instance)


def _min_items(limit: int, instance: Any, schema: Schema) -> bool:
    return not isinstance(instance, list) or len(instance) >= limit


def _max_items(limit: int, instance: Any, schema: Schema) -> bool:
    return not isinstance(instance, list) or len(instance) <= limit


def _unique_items(unique: bool, instance: Any, schema: Schema) -> bool:
    """Decided for lists of strings or of integers only (where Python's equality is JSON's)."""
    if not unique or not isinstance(instance, list):
        return True
    if all(isinstance(item, str) for item in instance) or all(_is_type(item, "integer") for item in instance):
        return len(set(instance)) == len(instance)
    return False


def _pattern(pattern: str, instance: Any, schema: Schema) -> bool:
    return not isinstance(instance, str) or re.search(pattern, instance) is not None


def _min_length(limit: int, instance: Any, schema: Schema) -> bool:
    return not isinstance(instance, str) or len(instance) >= limit


def _max_length(limit: int, instance: Any, schema: Schema) -> bool:
    return not isinstance(instance, str) or len(instance) <= limit


def _format(name: str, instance: Any, schema: Schema) -> bool:
    if name != "ipv4":
        return False
    if not isinstance(instance, str):
        return True
    try:
        ipaddress.IPv4Address(instance)
    except ValueError:
        return False
    return True


def _bound(holds: Callable[[Any, Any], bool]) -> _Keyword:
    """A bound applies to numbers only; a value of a type YAML does not give is not decided."""

    def check(bound: Any, instance: Any, schema: Schema) -> bool:
        if _is_type(instance, "number"):
            return holds(instance, bound)
        return type(instance) in _SCALARS or isinstance(instance, dict | list)

    return check


_SCALARS = frozenset({str, int, float, bool, type(None)})


def _same(one: Any, two: Any) -> bool:
    """Equal scalars of the same type: stricter than JSON Schema's equality, which takes 1 for
    1.0 and compares lists and mappings item by item."""
    return type(one) is type(two) and type(one) in _SCALARS and one == two


def _enum(options: list[Any], instance: Any, schema: Schema) -> bool:
    return any(_same(option, instance) for option in options)


def _const(value: Any, instance: Any, schema: Schema) -> bool:
    return _same(value, instance)


def _if(condition: Schema, instance: Any, schema: Schema) -> bool:
    """jsonschema applies `then` when `if` holds, else `else`; both holding is enough, and so is
    `if` holding with no `then` (a False from `conforms` on `if` is not a decided "no")."""
    then, otherwise = schema.get("then", True), schema.get("else", True)
    if set(condition) == {"required"}:  # decided exactly here: the branch jsonschema takes
        return conforms(then if conforms(condition, instance) else otherwise, instance)
    if conforms(then, instance) and conforms(otherwise, instance):
        return True
    return then is True and conforms(condition, instance)


def _all_of(schemas: list[Schema | bool], instance: Any, schema: Schema) -> bool:
    """Every subschema holds (a False from one is "not decided here", so is the whole).

    >>> rule = {"allOf": [{"if": {"required": ["a"]}, "then": {"required": ["b"]}}]}
    >>> conforms(rule, {"a": 1, "b": 2}), conforms(rule, {"a": 1}), conforms(rule, {"c": 1})
    (True, False, True)
    """
    return all(conforms(subschema, instance) for subschema in schemas)


_KEYWORDS: dict[str, _Keyword] = {
    "type": _type,
    "properties": _properties,
    "additionalProperties": _additional_properties,
    "propertyNames": _property_names,
    "required": _required,
    "maxProperties": _max_properties,
    "items": _items,
    "minItems": _min_items,
    "maxItems": _max_items,
    "uniqueItems": _unique_items,
    "pattern": _pattern,
    "minLength": _min_length,
    "maxLength": _max_length,
    "format": _format,
    "minimum": _bound(lambda value, bound: value >= bound),
    "maximum": _bound(lambda value, bound: value <= bound),
    "exclusiveMinimum": _bound(lambda value, bound: value > bound),
    "exclusiveMaximum": _bound(lambda value, bound: value < bound),
    "enum": _enum,
    "const": _const,
    "if": _if,
    "allOf": _all_of,
}
