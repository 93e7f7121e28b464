# dlmap Python binding — sourced by the scripts that run Python over a built extension (run_python.sh, the checker's
# scripts): preload_sanitizer_runtimes MODULE exports what an extension built with -fsanitize=address (or thread)
# needs in an uninstrumented interpreter: its sanitizer runtimes in LD_PRELOAD, loaded before anything else (UBSan's
# comes with ASan's). Nothing for a plain build. Leak checking covers dlmap's own memory through the module's
# allocation counters instead: CPython and PyTorch keep memory until exit by design.
# Sourced from the runfiles root: `. python/sanitizer_runtimes.sh` (the file is in the test's data).
preload_sanitizer_runtimes() {
  runtimes=$(ldd "$1" 2>/dev/null | awk '/lib(asan|tsan|ubsan)\.so/ {print $3}' | tr '\n' ' ')
  if [ -n "$runtimes" ]; then
    export LD_PRELOAD="${runtimes% }"
    export ASAN_OPTIONS="detect_leaks=0:abort_on_error=1:allow_user_segv_handler=1:${DLMAP_ASAN_OPTIONS:-}"
    export DLMAP_SANITIZED=1
    echo "sanitizer runtimes preloaded: $LD_PRELOAD"
  fi
}
