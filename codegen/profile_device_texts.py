# dlmap codegen — the profile's `device_texts:` (issue 27): how an error message's {device:text} and
# {source_device:text} print a device of each listed type (PyTorch's "cpu", "cuda:0"); optional.
"""Loaded by spec_profile.load_profile into the Profile (the `device_texts` table of codegen/profile_settings.py).

device_texts: {type: text, …}   per device type (enumerator, spelling, alias or value): the text, in which "{id}" is
                                replaced by the device id and no other brace may appear. A device of a type not listed
                                prints as the unstyled {device} does: (kDLCUDA, 0).
"""

import re

# "{id}", and text without braces around it.
TEXT = re.compile(r"(?:[^{}]|\{id\})+\Z")


def load(source, body, spec, h, device_value, profile):
    """Sets profile.device_texts, a list of (device type value, text) in spec order (empty: none listed)."""
    if "device_texts" not in body:
        return
    w = h._Where(source, "profile")
    value = body["device_texts"]
    if not isinstance(value, dict) or not value:
        w.fail("key 'device_texts' must be a non-empty mapping of device type: text, got %s" % h._type_name(value))
    texts = {}
    for key, text in value.items():
        device = device_value(w, "device_texts", key)
        if device in texts:
            w.fail("key 'device_texts' names device type %r twice" % key)
        if not isinstance(text, str) or not TEXT.match(text):
            w.fail("key 'device_texts': %r for %s is not a non-empty text whose only braces are {id}" % (text, key))
        texts[device] = text
    profile.device_texts = [(d.value, texts[d.value]) for d in spec.device_types if d.value in texts]
