"""Offline @rules_java shim: re-exports Bazel 4.2.3's native Java rules unchanged;
only @bazel_tools uses them (the project itself has no Java).

Each wrapper calls native.* (that is the shim's job), hence the buildifier suppressions.
"""

def java_binary(**kwargs):
    # buildifier: disable=native-java-binary
    native.java_binary(**kwargs)

def java_import(**kwargs):
    # buildifier: disable=native-java-import
    native.java_import(**kwargs)

def java_library(**kwargs):
    # buildifier: disable=native-java-library
    native.java_library(**kwargs)

def java_plugin(**kwargs):
    # buildifier: disable=native-java-plugin
    native.java_plugin(**kwargs)

def java_proto_library(**kwargs):
    # buildifier: disable=native-java-proto
    native.java_proto_library(**kwargs)

def java_runtime(**kwargs):
    # buildifier: disable=native-java-runtime
    native.java_runtime(**kwargs)

def java_test(**kwargs):
    # buildifier: disable=native-java-test
    native.java_test(**kwargs)

def java_toolchain(**kwargs):
    # buildifier: disable=native-java-toolchain
    native.java_toolchain(**kwargs)
