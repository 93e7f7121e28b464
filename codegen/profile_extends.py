# dlmap codegen — profile inheritance: `extends: <profile>` resolved into one whole profile (stdlib only).
"""The merge rule of `extends` (codegen/profile_settings.py's `extends` row), shared by every reader of a profile:
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
    lineage = _lineage(body, bases)
    root = lineage.pop()
    if not lineage:
        return root, _origins(root, None)
    merged, origins = copy.deepcopy(root), _origins(root, None)
    for profile in reversed(lineage):  # the root's child first, body last
        merged = _merge_into(merged, {k: v for k, v in profile.items() if k != "extends"}, top=True)
        for error_id, fields in _origins(profile, profile["name"]).items():
            origins.setdefault(error_id, {}).update(fields)
    return merged, origins


def _lineage(body, bases):
    """[body, its parent, …, the first profile that extends nothing], every link checked. A loop, not recursion,
    so that a chain of any depth resolves (issue 56: about 1000 profiles hit Python's recursion limit)."""
    lineage, names = [body], []
    while isinstance(lineage[-1], dict) and "extends" in lineage[-1]:
        child = lineage[-1]
        names.append(str(child.get("name")))
        lineage.append(bases[_parent_name(child, bases, names)])
    return lineage


def _parent_name(child, bases, names):
    """The name child's `extends:` gives, checked; names: the chain so far, child's own name last."""
    parent_name = child["extends"]
    if not isinstance(parent_name, str) or not parent_name:
        raise ExtendsError("key 'extends' must be a profile name, got %r" % (parent_name,))
    for key in ("name", "doc"):
        if key not in child:
            raise ExtendsError("missing key '%s' (a profile that extends another needs its own %s)" % (key, key))
    if child["name"] == parent_name:
        raise ExtendsError("key 'name': %r is the name of the profile it extends; give it its own" % parent_name)
    if parent_name in names:
        raise ExtendsError("key 'extends': %s extends itself (%s)" % (parent_name, _path(names + [parent_name])))
    if parent_name not in bases:
        raise ExtendsError("key 'extends': unknown profile %r (known: %s)"
                           % (parent_name, ", ".join(sorted(bases)) or "none"))
    return parent_name


def _path(names, shown=8):
    """'a → b → c' for a cycle's report; a long chain keeps its ends and says how many it leaves out."""
    if len(names) <= shown:
        return " → ".join(names)
    half = shown // 2
    return " → ".join(names[:half] + ["… (%d more)" % (len(names) - shown)] + names[-half:])


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


def _merge_into(target, child, top=False):
    """child over target by the merge rule, written into target (a copy the caller owns) and returned; child is not
    modified. In place, so that a deep chain costs one copy of its root, not one per level."""
    if not isinstance(target, dict) or not isinstance(child, dict):
        return copy.deepcopy(child)
    for key, value in child.items():
        if top and key == "errors" and isinstance(value, list) and isinstance(target.get("errors"), list):
            _merge_errors_into(target["errors"], value)
        elif key in target:
            target[key] = _merge_into(target[key], value)
        else:
            target[key] = copy.deepcopy(value)
    return target


def _merge_errors_into(target, child):
    """The `errors:` lists merged by id, field by field, into target; entries without an id are kept for the loader
    to report."""
    index = {e["id"]: i for i, e in enumerate(target) if isinstance(e, dict) and isinstance(e.get("id"), str)}
    for entry in child:
        if isinstance(entry, dict) and isinstance(entry.get("id"), str) and entry["id"] in index:
            target[index[entry["id"]]].update(copy.deepcopy(entry))
        else:
            target.append(copy.deepcopy(entry))
