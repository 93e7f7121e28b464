"""Where dlmap's files are when one of its tests runs, whichever workspace runs it.

Bazel starts a test in the runfiles directory of the *main* workspace. When dlmap is the main workspace its files are
right there; when a consumer runs `bazel test @dlmap//...` they are under external/<dlmap's repository name>/. A test
that reads dlmap's files by their paths in the checkout gets DLMAP_TEST_ENV and changes to $DLMAP_ROOT first. Paths
given to it as $(rootpath …) stay valid there: ../<repository>/<path> from external/<dlmap>/ is
external/<repository>/<path>, where Bazel's external runfiles tree holds every repository.
"""

DLMAP_TEST_ENV = {"DLMAP_ROOT": Label("//:BUILD").workspace_root or "."}
