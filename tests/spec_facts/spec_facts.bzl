"""dlmap tests: spec_facts(name, spec), the spec's entries as test data (a C header and shell assignments).

They are read by tests/spec_facts/spec_facts.py with plain PyYAML, independently of the generator the library is
built with.
"""

load("@rules_cc//cc:defs.bzl", "cc_library")

_PYTHON = str(Label("@dlmap_config//:tools/python3"))
_SCRIPT = str(Label("//tests/spec_facts:spec_facts.py"))

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
        srcs = spec,
        outs = [header, shell],
        tools = [_PYTHON, _SCRIPT],
        cmd = "specs=; for f in $(SRCS); do specs=\"$$specs --spec $$f\"; done; " +
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
