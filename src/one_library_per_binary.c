/* dlmap link guard — one dlmap library per binary. Every dlmap_library() links its own copy of this file whole
 * (src/dlmap_library.bzl: an alwayslink cc_library named <library>_one_library_per_binary). Two libraries built
 * from different specs define the same symbols with different tables, and a static link would silently keep the
 * first archive's and drop the other's profile; with this file in each, the linker instead stops with
 * "multiple definition of `<the symbol below>`", naming both libraries' guard objects, and the symbol's name says
 * what to do. Two consumers of the same library share one copy, so they still link.
 *
 * Hidden: a shared object that links a library (the Python binding) does not export the guard. */
__attribute__((visibility("hidden"))) const char
    dlmap_link_error_two_dlmap_libraries_in_one_binary_link_only_one_see_README[] =
        "A binary links one dlmap library (one spec, one profile): depend on one dlmap_library() target only.";
