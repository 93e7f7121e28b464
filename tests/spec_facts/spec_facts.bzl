"""dlmap tests: spec_facts(name, spec), the spec's entries as test data (a C header and shell assignments).

They are read by tests/spec_facts/spec_facts.py with plain PyYAML, independently of the generator the library is
built with.
"""

load("@rules_cc//cc:defs.bzl", "cc_library")

_PYTHON = str(Label("@dlmap_config//:tools/python3"))
_SCRIPT = str(Label("//tests/spec_facts:spec_facts.py"))
_EXTENDS = str(Label("//codegen:profile_extends.py"))  # imported by the script from dlmap's codegen/
_PROFILES = str(Label("//spec:profiles"))

def spec_facts(name, spec, visibility = None):
    """The spec's entries as a C header and a shell file.

    Args:
      name: a cc_library whose header is included as "generated/spec_facts.h"; `name`/generated/spec_facts.sh is
        the shell file.
      spec: the YAML files, in the order the library under test reads them.
      visibility: of both targets.
    """
    header = name + "/generated/spec_facts.h"
    shell = name + "/generated/spec_facts.sh"
    native.genrule(
        name = name + "_gen",
        srcs = spec + [_PROFILES],
        outs = [header, shell],
        tools = [_PYTHON, _SCRIPT, _EXTENDS],
        # The spec's files in order; dlmap's shipped profiles are what a profile's `extends:` may name.
        cmd = "specs=; for f in %s; do specs=\"$$specs --spec $$f\"; done; " % " ".join(
                  ["$(locations %s)" % label for label in spec],
              ) +
              "for f in $(locations %s); do specs=\"$$specs --base_profile $$f\"; done; " % _PROFILES +
              "$(location %s) $(location %s) $$specs --c_header $(location %s) --sh $(location %s)" %
              (_PYTHON, _SCRIPT, header, shell),
        testonly = True,
        visibility = visibility,
    )
    cc_library(
        name = name,
        hdrs = [header],
        strip_include_prefix = name,
        testonly = True,
        visibility = visibility,
    )
