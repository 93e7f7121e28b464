#!/bin/sh
# dlmap conformance checker — runs gpu/check.sh's conformance step (python -m dlmap.check.gpu_peers) with the module
# built over tests/gpu's fake CUDA runtime: dlmap's own kDLCUDA arrays must pass every row under the module's profile,
# with a real stream of the runtime for the handle row, no invented handle and the device-claim row D2 run and passed;
# the peers it cannot run here (no JAX, CuPy or CUDA device) must be skipped with a reason; and peers that crash
# (fake_gpu_peers.py: a producer's every call, a producer while made, a consumer, the consumer on the crafted producers
# that lie about device memory too) must be rows saying so, with dlmap's rows still run and the exit status 0.
# usage: gpu_peers_fake_gpu_test.sh PYTHON path/to/fake_gpu/dlmap/__init__.so path/to/fake_gpu_peers.py
set -eu
abs() { case "$1" in /*) echo "$1" ;; */*) echo "$PWD/$1" ;; *) echo "$1" ;; esac; }
python=$(abs "$1")
module=$(abs "$2")
package=$(dirname "$(dirname "$module")")
helpers=$(dirname "$(abs "$3")")
runtime=$(find -L . -name libdlmap_fake_gpu.so -path '*_solib*' | head -n 1)
[ -n "$runtime" ] || { echo "FAIL: the fake CUDA runtime is not in the runfiles" >&2; exit 1; }
runtime=$(abs "$runtime")
# Not TEST_UNDECLARED_OUTPUTS_DIR: Bazel zips that with `zip`, which a fresh Debian userland lacks (the test then fails).
out=${TEST_TMPDIR:-/tmp}/conformance
fail() { echo "FAIL: $*" >&2; exit 1; }
# dlmap's own files by their checkout paths: a consumer's `bazel test @dlmap//...` starts here in its own runfiles.
cd "${DLMAP_ROOT:-.}"
. python/sanitizer_runtimes.sh
preload_sanitizer_runtimes "$module"
status=0
LD_LIBRARY_PATH="$(cd "$(dirname "$runtime")" && pwd)${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
  PYTHONPATH="$package:$helpers" PYTHONDONTWRITEBYTECODE=1 "$python" -m dlmap.check.gpu_peers "$out" \
  --deadline 400 --stream 'fake_gpu_peers:stream()' \
  --peer crasher 'fake_gpu_peers:Crashes()' 'fake_gpu_peers:crash' - \
  --peer crashes_when_made 'fake_gpu_peers:crashes_when_made()' 'fake_gpu_peers:crash' - >"$out.log" 2>&1 || status=$?
cat "$out.log"
[ "$status" = 0 ] || fail "exit status $status, not 0"
grep -Eq '^PASS  conformance dlmap producer \(CUDA\) under its array_api profile: [0-9]+ rows pass, 0 fail' "$out.log" ||
  fail "dlmap's CUDA rows did not all pass"
table=$out/dlmap_array_api_cuda_producer.md
grep -q 'kDLCUDA (2):0' "$table" || fail "the array was not on kDLCUDA"
# The device-claim row ran (the fake runtime is loaded in the producer's process) and dlmap's claim is its memory's.
grep -Eq '^\| D2 \| .* \| imported on .*; the runtime agrees \| pass \| pass \|$' "$table" ||
  fail "the device-claim row D2 did not run and pass"
# The handle row passes a stream the runtime made; no integer that names no stream is sent (spec: handles_above 2).
grep -q '__dlpack__(stream=<a stream the check made>) |' "$table" || fail "no row with a stream the check made"
if grep -Eq '__dlpack__\(stream=([3-9]|[1-9][0-9]+)\)' "$table"; then fail "an invented stream handle was sent"; fi
for peer in jax torch cupy; do
  grep -q "conformance $peer" "$out.log" || fail "no line for $peer"
done
# The crashing peers are rows, and the run went on to the summary.
grep -Eq "^INFO  conformance crasher producer \(CUDA\): [0-9]+ rows pass, [1-9][0-9]* fail" "$out.log" || fail "no producer table for crasher"
grep -q 'P-crash.*crashed (SIGSEGV)' "$out/crasher_cuda_producer.md" || fail "crasher's crashes are not P-crash rows"
grep -q '^INFO  conformance crasher consumer: 0 rows pass' "$out.log" || fail "no consumer table for crasher"
grep -q 'C-crash.*crashed (SIGSEGV)' "$out/crasher_consumer.md" || fail "the consumer's crashes are not C-crash rows"
for liar in C18 C19 C20; do  # the crafted producers that lie about device memory run over the fake's memory
  grep -q "^| $liar | .* | crashed (SIGSEGV) | \*\*FAIL\*\* \`C-crash\`" "$out/crasher_consumer.md" ||
    fail "$liar is not a C-crash row for the crashing consumer"
done
grep -q '| M1 | make the producer in a child interpreter | crashed (SIGSEGV) |' \
  "$out/crashes_when_made_cuda_producer.md" || fail "a crash while made is not a row"
grep -q '^conformance: PASS: dlmap PASS' "$out.log" || fail "no summary line"
echo "PASS"
