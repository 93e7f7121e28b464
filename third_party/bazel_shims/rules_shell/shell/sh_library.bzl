"""Offline @rules_shell shim: sh_library is Bazel 4.2.3's native rule, loaded from rules_shell 0.4.0's path.

Bazel 8/9 drop the global sh_* rules; BUILD files load them from here so the same files build on both.
"""

def sh_library(**kwargs):
    # A shim over the built-in rule has to call native.sh_library.
    # buildifier: disable=native-sh-library
    native.sh_library(**kwargs)
