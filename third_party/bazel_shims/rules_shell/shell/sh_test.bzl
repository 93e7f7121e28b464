"""Offline @rules_shell shim: sh_test is Bazel 4.2.3's native rule, loaded from rules_shell 0.4.0's path.

Bazel 8/9 drop the global sh_* rules; BUILD files load them from here so the same files build on both.
"""

def sh_test(**kwargs):
    # A shim over the built-in rule has to call native.sh_test.
    # buildifier: disable=native-sh-test
    native.sh_test(**kwargs)
