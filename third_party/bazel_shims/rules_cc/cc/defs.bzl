"""Offline @rules_cc shim: re-exports Bazel 4.2.3's native C/C++ rules unchanged,
so @bazel_tools and the project load them without downloading rules_cc.

Each wrapper calls native.* (that is the shim's job), hence the buildifier suppressions.
"""

def cc_binary(**kwargs):
    # buildifier: disable=native-cc-binary
    native.cc_binary(**kwargs)

def cc_import(**kwargs):
    # buildifier: disable=native-cc-import
    native.cc_import(**kwargs)

def cc_library(**kwargs):
    # buildifier: disable=native-cc-library
    native.cc_library(**kwargs)

def cc_test(**kwargs):
    # buildifier: disable=native-cc-test
    native.cc_test(**kwargs)

def cc_proto_library(**kwargs):
    # buildifier: disable=native-cc-proto
    native.cc_proto_library(**kwargs)

def cc_toolchain(**kwargs):
    # buildifier: disable=native-cc-toolchain
    native.cc_toolchain(**kwargs)

def cc_toolchain_suite(**kwargs):
    # buildifier: disable=native-cc-toolchain-suite
    native.cc_toolchain_suite(**kwargs)

def objc_library(**kwargs):
    # buildifier: disable=native-cc-objc-library
    native.objc_library(**kwargs)
