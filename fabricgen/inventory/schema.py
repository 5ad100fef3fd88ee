"""Check the raw YAML against `schemas/fabric.schema.json` before anything is expanded, and fill
in the schema's defaults. The schema is the one source of truth for keys, types and defaults;
this module only turns jsonschema's findings into messages a network engineer can act on.
"""

from __future__ import annotations

import copy
import difflib
from collections.abc import Callable
from functools import cache
from typing import TYPE_CHECKING, Any

from fabricgen.core.counts import COUNT_PATTERN
from fabricgen.core.diagnostics import Diagnostic
from fabricgen.core.units import (
    LENGTH_PATTERN,
    RATIO_PATTERN,
    SIZE_PATTERN,
    SPEED_PATTERN,
    normalise_count,
    normalise_length,
    normalise_ratio,
    normalise_size,
    normalise_speed,
)
from fabricgen.inventory.conforms import conforms
from fabricgen.inventory.implicit import expected_types, read_as_meant
from fabricgen.inventory.loader import PathKey, SourceMap, format_path
from fabricgen.inventory.schemafile import checked_schema

if TYPE_CHECKING:
    import jsonschema

_TYPE_NAMES = {
    "integer": "an integer",
    "number": "a number",
    "string": "a string",
    "boolean": "true or false",
    "object": "a mapping",
    "array": "a list",
    "null": "nothing",
}

_PATTERN_HINTS = {
    "G$": "write speeds like 400G",
    "(B|KB|MB)$": "write sizes like 150KB or 3MB",
    "m$": "write lengths like 30m",
    "/[0-9]{1,2}$": "write prefixes like 10.0.0.0/24",
    "{index": "the pattern must contain {index} or {index:02d}",
    "[a-z0-9-]{0,39}$": "use lower case letters, digits and dashes, at most 40 characters",
    "0x[0-9a-fA-F]{16}$": "write GUIDs as 0x plus 16 hex digits, in quotes",
    "[0-9]{1,4})?)?$": "write ratios like 3:1, 1:1 or 1.5",
}


MOVED_KEYS = {
    ("oversubscription", "drain_max_ratio"): (
        "oversubscription.drain_max_ratio is now oversubscription.during_change: one ratio for drains and deploy batches",
        "write during_change: <the ratio> (1.5 by default) and remove drain_max_ratio",
    ),
}
"""Keys an earlier version accepted: (message, hint) instead of "unknown key" (docs/inventory.md)."""

_ASN_HINT = "AS 0 (RFC 7607) and AS 4294967295 (RFC 7300) are reserved"


REQUIRED_BECAUSE = {
    "addressing": (
        "addressing is required for RoCE fabrics (fabric.transport: roce, the default): every loopback, "
        "fabric link and server address comes from its pools; InfiniBand fabrics (fabric.transport: infiniband) need none"
    ),
    "fabric": "every inventory names its fabric (fabric.name is the output folder build/<name>/)",
    "spines": "every fabric has a spine tier (count and model)",
    "leaves": "every fabric has a leaf tier (count and model)",
    "fabric.name": "the name is the output folder build/<name>/ and the prefix of device names",
    "addressing.loopbacks": "every switch gets its Loopback0 /32 (router ID, BGP) from this pool",
    "addressing.fabric": "every switch-to-switch cable gets its /31 from this pool",
}
"""Why a key is required, by key path: said with the missing-key message."""


@cache
def fabric_schema() -> dict[str, Any]:
    """The schema the checks read: the published file, its platform enum from the registry,
    `$ref`s inlined (see `schemafile`)."""
    return checked_schema()


def _describe(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "nothing"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    text = repr(value) if isinstance(value, str) else str(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _subschema(schema: dict[str, Any], path: PathKey) -> dict[str, Any]:
    """The schema that applies at `path` (object properties and array items only)."""
    node = schema
    for part in path:
        if isinstance(part, int):
            node = node.get("items", {})
        elif part in node.get("properties", {}):
            node = node["properties"][part]
        elif isinstance(node.get("additionalProperties"), dict):
            node = node["additionalProperties"]
        else:
            return {}
    return node


def _message(error: jsonschema.ValidationError, source: SourceMap) -> list[Diagnostic]:
    path: PathKey = tuple(error.absolute_path)
    kind = error.validator
    value = error.instance
    if kind == "additionalProperties" and isinstance(value, dict):
        allowed = sorted(_subschema(fabric_schema(), path).get("properties", {}))
        known = set(allowed)
        found = []
        for key in sorted(k for k in value if k not in known):
            if (*path, key) in MOVED_KEYS:
                message, hint = MOVED_KEYS[(*path, key)]
                found.append(source.diagnostic((*path, key), message, hint=hint, key=True))
                continue
            close = difflib.get_close_matches(key, allowed, n=1, cutoff=0.6)
            hint = f"did you mean '{close[0]}'?" if close else ("expected one of: " + ", ".join(allowed) if allowed else "")
            found.append(source.diagnostic((*path, key), f"unknown key '{key}'", hint=hint, key=True))
        return found
    if kind == "required":
        missing = str(error.message).split("'")[1] if "'" in error.message else str(error.validator_value)
        why = REQUIRED_BECAUSE.get(format_path((*path, missing)), "")
        return [source.diagnostic(path, f"missing required key '{missing}'" + (f": {why}" if why else ""), key=True)]
    if kind == "type":
        expected = error.validator_value
        names = [_TYPE_NAMES.get(str(t), str(t)) for t in (expected if isinstance(expected, list) else [expected])]
        pattern = str(error.schema.get("pattern", "")) if isinstance(error.schema, dict) else ""
        hint = next((h for key, h in _PATTERN_HINTS.items() if pattern and key in pattern), "")
        return [source.diagnostic(path, f"expected {' or '.join(names)}, got {_describe(value)}", hint=hint)]
    if kind == "enum":
        options = ", ".join(str(v) for v in error.validator_value)
        close = difflib.get_close_matches(str(value), [str(v) for v in error.validator_value], n=1)
        hint = f"did you mean '{close[0]}'?" if close else ""
        return [source.diagnostic(path, f"expected one of {options}; got {_describe(value)}", hint=hint)]
    if kind == "pattern":
        hint = next(
            (h for key, h in _PATTERN_HINTS.items() if str(error.validator_value).endswith(key) or key in str(error.validator_value)), ""
        )
        return [source.diagnostic(path, f"{_describe(value)} is not in the expected form", hint=hint)]
    if kind in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
        bound = {"minimum": "at least", "maximum": "at most", "exclusiveMinimum": "more than", "exclusiveMaximum": "less than"}[kind]
        hint = _ASN_HINT if path and str(path[-1]).endswith("asn") else ""
        return [source.diagnostic(path, f"must be {bound} {error.validator_value}, got {_describe(value)}", hint=hint)]
    if kind == "format":
        return [source.diagnostic(path, f"{_describe(value)} is not a valid {error.validator_value} address")]
    if kind in ("minItems", "maxItems"):
        return [
            source.diagnostic(path, f"list must have {'at least' if kind == 'minItems' else 'at most'} {error.validator_value} entries")
        ]
    if kind == "uniqueItems":
        return [source.diagnostic(path, "entries must be unique")]
    if kind == "propertyNames":
        return [source.diagnostic(path, error.message)]
    return [source.diagnostic(path, error.message)]


def _is_integer(checker: Any, instance: Any) -> bool:
    """Only a written integer is one: JSON Schema would accept 4.0 (and -0.0) as an integer,
    and a float count or index then fails deep inside the planner."""
    return isinstance(instance, int) and not isinstance(instance, bool)


@cache
def _validator() -> Any:
    """jsonschema's Draft 2020-12 validator with fabricgen's integer, imported on first use: only
    an inventory that `conforms` does not accept needs it (see `validate_document`)."""
    import jsonschema

    checker = jsonschema.Draft202012Validator.TYPE_CHECKER.redefine("integer", _is_integer)
    validator_class = jsonschema.validators.extend(jsonschema.Draft202012Validator, type_checker=checker)
    return validator_class(fabric_schema(), format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)


_NORMALISERS: dict[str, Callable[[str], tuple[Any, str]]] = {
    SPEED_PATTERN: normalise_speed,
    SIZE_PATTERN: normalise_size,
    LENGTH_PATTERN: normalise_length,
    COUNT_PATTERN: normalise_count,
    RATIO_PATTERN: normalise_ratio,
}
"""Unit-bearing values by the schema pattern that checks them (a ratio becomes its number)."""


def normalise_units(data: Any, source: SourceMap) -> tuple[Any, list[Diagnostic]]:
    """A copy of `data` with every unquoted scalar read as meant (`inventory/implicit.py`:
    `1:1` where a ratio is expected is 1:1, not YAML 1.1's 61), speeds, sizes, lengths and
    counts in canonical form (`400 g` -> `400G`, `1mb` -> `1MB`, `0.5km` -> `500m`), ratios as
    their number (`3:1` -> 3.0), and a diagnostic for each value that could mean two things
    (`400GB`, `100Kb`, `010`). Run before the schema, so the schema, the plan and every output
    see the canonical form; the schema then checks the range as usual."""
    problems: list[Diagnostic] = []

    def walk(schema: dict[str, Any], value: Any, path: PathKey) -> Any:
        text = source.plain.get(path)
        if text is not None and not isinstance(value, dict | list):
            value, why, hint = read_as_meant(text, value, expected_types(schema))
            if why:
                problems.append(source.diagnostic(path, why, hint=hint))
                return value
        if isinstance(value, str):
            normalise = _NORMALISERS.get(str(schema.get("pattern", "")))
            if normalise is None:
                return value
            canonical, why = normalise(value)
            if why:
                problems.append(source.diagnostic(path, why))
            return canonical
        if isinstance(value, dict):
            properties = schema.get("properties", {})
            extra = schema.get("additionalProperties")
            return {
                key: walk(properties.get(key, extra if isinstance(extra, dict) else {}), sub, (*path, key)) for key, sub in value.items()
            }
        if isinstance(value, list):
            items = schema.get("items")
            return [walk(items if isinstance(items, dict) else {}, item, (*path, index)) for index, item in enumerate(value)]
        return value

    return walk(fabric_schema(), data, ()), problems


def validate_document(data: Any, source: SourceMap) -> list[Diagnostic]:
    """Every schema violation in `data`, sorted by position.

    A document that `conforms` accepts has none (jsonschema would find none), and needs no
    jsonschema; any other goes through jsonschema, which finds and words every violation."""
    if conforms(fabric_schema(), data):
        return []
    diagnostics: list[Diagnostic] = []
    for error in _validator().iter_errors(data):
        diagnostics.extend(_message(error, source))
    unique = {(d.line, d.column, d.path, d.message): d for d in diagnostics}
    return [unique[k] for k in sorted(unique)]


def apply_defaults(data: dict[str, Any]) -> dict[str, Any]:
    """A copy of a schema-valid document with every schema default filled in."""
    result = copy.deepcopy(data)
    _fill(fabric_schema(), result)
    return result


def _fill(schema: dict[str, Any], value: Any) -> None:
    if isinstance(value, dict):
        for key, sub in schema.get("properties", {}).items():
            if key not in value:
                if "default" in sub:
                    value[key] = copy.deepcopy(sub["default"])
                elif sub.get("type") == "object" and "properties" in sub and not sub.get("required"):
                    value[key] = {}
            if key in value:
                _fill(sub, value[key])
        extra = schema.get("additionalProperties")
        if isinstance(extra, dict):
            for key in value:
                if key not in schema.get("properties", {}):
                    _fill(extra, value[key])
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for item in value:
            _fill(schema["items"], item)
