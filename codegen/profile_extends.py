# dlmap codegen — profile inheritance: `extends: <profile>` resolved into one whole profile (stdlib only).
"""The merge rule of `extends` (schema: the top of spec/profiles/jax.yaml), shared by every reader of a profile:
codegen/spec_profile.py (the generator and `dlmap spec check`) and tests/spec_facts/spec_facts.py (the plain PyYAML
reader the tests and the conformance checker use), so they all see the same merged profile.

  profile:
    extends: jax          a profile by name (its `name:`), among the profiles the reader was given
    name: jax_acme        required: a child never runs under its parent's name
    doc: "…"              required: the parent's paragraph describes the parent
    …                     only the keys that change

Merge rule: mappings merge key by key (recursively); lists and scalars replace the parent's value whole; the
`errors:` list merges by `id`, field by field (a child's entry changes only the fields it names; an id the parent
does not list is appended). A parent may itself extend another profile.

Dependency-free (no PyYAML, no codegen module) so that a copy can travel with the conformance checker.
"""

import copy

ERROR_FIELDS = ("kind", "message", "status")  # the fields of a profile's `errors:` entry that replace the catalogue's


class ExtendsError(ValueError):
    """A profile that cannot be resolved; the text names the key (the caller adds the file)."""


def resolve(body, bases):
    """body: a `profile` mapping; bases: {profile name: profile mapping} of the profiles it may extend.
    Returns the merged profile mapping (without `extends`); body itself is returned when it extends nothing."""
    return resolve_with_origins(body, bases)[0]


def resolve_with_origins(body, bases):
    """As resolve(), plus {error id: {field: profile name}}: which profile each error's kind, message and status
    comes from (a field no profile sets is absent: the catalogue's own applies)."""
    return _resolve(body, bases, ())


def _resolve(body, bases, chain):
    if not isinstance(body, dict) or "extends" not in body:
        return body, _origins(body, None)
    parent_name = body["extends"]
    name = body.get("name")
    if not isinstance(parent_name, str) or not parent_name:
        raise ExtendsError("key 'extends' must be a profile name, got %r" % (parent_name,))
    for key in ("name", "doc"):
        if key not in body:
            raise ExtendsError("missing key '%s' (a profile that extends another needs its own %s)" % (key, key))
    if name == parent_name:
        raise ExtendsError("key 'name': %r is the name of the profile it extends; give it its own" % name)
    if parent_name in chain or parent_name == name:
        raise ExtendsError("key 'extends': %s extends itself (%s)"
                           % (parent_name, " → ".join(list(chain) + [str(name), parent_name])))
    if parent_name not in bases:
        raise ExtendsError("key 'extends': unknown profile %r (known: %s)"
                           % (parent_name, ", ".join(sorted(bases)) or "none"))
    parent, origins = _resolve(bases[parent_name], bases, chain + (str(name),))
    merged = _merge(parent, {k: v for k, v in body.items() if k != "extends"}, top=True)
    for error_id, fields in _origins(body, name).items():
        origins.setdefault(error_id, {}).update(fields)
    return merged, origins


def _origins(body, name):
    """{error id: {field: name}} for the fields this profile's own `errors:` entries set (name: its own, or its
    `name:` when None)."""
    if not isinstance(body, dict):
        return {}
    name = name if name is not None else body.get("name")
    found = {}
    for entry in body.get("errors") or []:
        if isinstance(entry, dict) and isinstance(entry.get("id"), str):
            found.setdefault(entry["id"], {}).update({f: name for f in ERROR_FIELDS if f in entry})
    return found


def _merge(parent, child, top=False):
    """child over parent by the merge rule; neither is modified."""
    if not isinstance(parent, dict) or not isinstance(child, dict):
        return copy.deepcopy(child)
    merged = copy.deepcopy(parent)
    for key, value in child.items():
        if top and key == "errors" and isinstance(value, list) and isinstance(parent.get("errors"), list):
            merged["errors"] = _merge_errors(parent["errors"], value)
        elif key in merged:
            merged[key] = _merge(merged[key], value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


def _merge_errors(parent, child):
    """The `errors:` lists merged by id, field by field; entries without an id are kept for the loader to report."""
    merged = copy.deepcopy(parent)
    index = {e["id"]: i for i, e in enumerate(merged) if isinstance(e, dict) and isinstance(e.get("id"), str)}
    for entry in child:
        if isinstance(entry, dict) and isinstance(entry.get("id"), str) and entry["id"] in index:
            merged[index[entry["id"]]].update(copy.deepcopy(entry))
        else:
            merged.append(copy.deepcopy(entry))
    return merged
