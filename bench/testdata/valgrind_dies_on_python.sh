#!/bin/sh
# A valgrind stand-in for bench/callgrind_sigill_test.sh: what valgrind 3.19 did on an AMD Zen 5 (issue 65), where it
# met an instruction it cannot emulate (RDTSCP, in a library the Python benchmark's imports load) and died by SIGILL.
# The Python step dies so; every other step runs under the real valgrind.
for argument in "$@"; do
  case $argument in
    */python3*)
      echo "vex amd64->IR: unhandled instruction bytes: 0xF 0x1 0xF9 (the stand-in's RDTSCP)" >&2
      kill -ILL $$
      ;;
  esac
done
exec valgrind "$@"
