"""Offline @rules_shell shim: sh_binary is Bazel 4.2.3's native rule, loaded from rules_shell 0.4.0's path.

Bazel 8/9 drop the global sh_* rules; BUILD files load them from here so the same files build on both.
"""

def sh_binary(**kwargs):
    # A shim over the built-in rule has to call native.sh_binary.
    # buildifier: disable=native-sh-binary
    native.sh_binary(**kwargs)
