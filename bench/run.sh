#!/bin/sh
# dlmap benchmarks — the one command: builds bench/ with -c opt, runs every benchmark, counts instructions with callgrind, prints the report (BENCHMARKS.md).
#
# usage: bench/run.sh [--smoke] [--update-md [--section NAME]] [--no-callgrind] [--no-python] [-- extra Google Benchmark flags]
#   (default)     the full run: 5 repetitions of every benchmark (medians), callgrind counts, Python, the report
#   --smoke       CI: build, run each benchmark once briefly (never timed, nothing compared), count a few calls of each
#                 under callgrind where valgrind is installed, check the report
#   --update-md   also replace the generated part of BENCHMARKS.md (between its bench:begin/end markers)
#   --section N   with --update-md: write between BENCHMARKS.md's markers for N instead (another machine or stack,
#                 e.g. debian-testing; added at the end the first time), leaving the main tables as they are
# Results go to $DLMAP_BENCH_OUT (default: a new directory under /tmp), printed at the end. $DLMAP_BENCH_VALGRIND
# names the valgrind to count with (default valgrind; bench/callgrind_sigill_test.sh gives one that dies on a step).
# A counting step that cannot run here (valgrind killed by SIGILL on an instruction it cannot emulate, or failing
# otherwise) leaves its columns empty with the reason printed; the report is still written and its other verdicts
# stand.
# Needs libbenchmark-dev; libtorch-dev (the peer), python3-numpy with python3-dev (the Python benchmark) and
# valgrind (instruction counts) are used when installed.
set -eu
cd "$(dirname "$0")/.."

smoke=0
update_md=0
section=""
callgrind=1
python=1
while [ $# -gt 0 ]; do
  case "$1" in
    --smoke) smoke=1 ;;
    --update-md) update_md=1 ;;
    --section) shift; section=${1:?--section needs a name} ;;
    --no-callgrind) callgrind=0 ;;
    --no-python) python=0 ;;
    --) shift; break ;;
    *) echo "usage: bench/run.sh [--smoke] [--update-md [--section NAME]] [--no-callgrind] [--no-python] [-- benchmark flags]" >&2; exit 2 ;;
  esac
  shift
done
out="${DLMAP_BENCH_OUT:-$(mktemp -d /tmp/dlmap-bench.XXXXXX)}"
mkdir -p "$out"
valgrind=${DLMAP_BENCH_VALGRIND:-valgrind}
command -v "$valgrind" >/dev/null || valgrind=""
# Counts the full run takes per case; the smoke run takes a few, to check that each counting step and its report work.
counts=20000 python_counts=5000 copy_filter='^copy/.*/(1|16|256)MiB$'
[ "$smoke" = 1 ] && counts=10 python_counts=10 copy_filter='^copy/(memcpy|compact)/1MiB$'

# counted STEP DIR ARGS...: valgrind --tool=callgrind ARGS, its stderr in DIR/valgrind.log (stdout is the caller's;
# DIR exists). 0; or, where it failed, the reason on stderr (the STEP's columns stay empty) and 1: the run goes on.
counted() {
  step=$1
  dir=$2
  shift 2
  rm -f "$dir"/cg.out*
  status=0
  "$valgrind" --tool=callgrind "$@" 2> "$dir/valgrind.log" || status=$?
  [ "$status" -eq 0 ] && return 0
  case $status in
    132) why="was killed by SIGILL (an instruction valgrind cannot emulate on this CPU)" ;;
    *) why="exited $status" ;;
  esac
  echo "bench/run.sh: no instruction counts for $step: callgrind $why; its columns are left empty, the other" \
    "verdicts stand (the end of $dir/valgrind.log: $(tail -n 1 "$dir/valgrind.log"))" >&2
  return 1
}

# ---- build (the same configuration as any -c opt build: the flags are recorded below)
targets="//bench:exchange_bench //bench:exchange_bench_nopeer"
config_summary="$(bazel info output_base)/external/dlmap_config/SUMMARY"
# The Python rows run the Array API profile's module: the one with versioned capsules (max_version=(1, 3)), the
# versioned-first negotiation with old producers and the C exchange API, which the issue's rows measure.
pymod=//python/array_api:dlmap.so
if [ "$python" = 1 ] && ! bazel query $pymod >/dev/null 2>&1; then
  echo "run.sh: there is no Python module $pymod: the Python benchmark is skipped" >&2
  python=0
fi
if [ "$python" = 1 ] && bazel query "attr(tags, manual, $pymod)" 2>/dev/null | grep -q . ; then
  echo "run.sh: $pymod is not built here (no Python.h): the Python benchmark is skipped" >&2
  python=0
fi
if [ "$python" = 1 ] && ! /usr/bin/python3 -c 'import numpy' 2>/dev/null; then
  echo "run.sh: /usr/bin/python3 has no NumPy (apt-get install python3-numpy): the Python benchmark is skipped" >&2
  python=0
fi
[ "$python" = 1 ] && targets="$targets //bench:python_bench $pymod"
bazel build -c opt $targets
bin="$(bazel info -c opt bazel-bin)/bench"
# What `bazel run //bench:python_bench` runs, with Debian's interpreter (a built binary does not get BUILD's args).
python_bench() { bench/python_bench.sh /usr/bin/python3 "$bin/../python/array_api/dlmap.so" bench/python_bench.py "$@"; }

# ---- what this run is: machine, compiler, flags, date
{
  echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "machine: $(uname -srm); $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //') ($(nproc) CPUs online), $(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo); a shared machine (other builds may run)"
  echo "compiler: $(gcc --version | head -1); glibc $(ldd --version | head -1 | awk '{print $NF}')"
  flags=$(bazel aquery -c opt 'mnemonic("CppCompile", //src:dlmap)' --output=text 2>/dev/null |
          awk '/Compiling src\/export.c/ {f = 1} f && /Command Line/ {g = 1} g {print} g && /\)$/ {exit}' |
          tr -d "\\\\'" | awk '{print $1}' | grep -E '^-(O|g|f|D|U|std|W|pedantic|m)' | grep -vE '^-(fno-canonical|frandom-seed|D__|Wno-builtin-macro)' |
          tr '\n' ' ')
  echo "flags (bazel -c opt, dlmap's C): ${flags:-?}"
  echo "Google Benchmark $(dpkg-query -W -f '${Version}' libbenchmark-dev 2>/dev/null || echo '?') (Debian libbenchmark-dev); libtorch $(dpkg-query -W -f '${Version}' libtorch-dev 2>/dev/null || echo 'not installed'); valgrind $(valgrind --version 2>/dev/null || echo 'not installed')"
  echo "toolchain detection: $(grep -E '^(bench|torch) ' "$config_summary" 2>/dev/null | tr '\n' ';' | sed 's/  */ /g')"
} > "$out/meta.txt"

# ---- 1. the Google Benchmark run: one binary, one run
if [ "$smoke" = 1 ]; then
  "$bin/exchange_bench" --benchmark_min_time=0.001 --benchmark_out="$out/bench.json" --benchmark_out_format=json "$@"
else
  "$bin/exchange_bench" --benchmark_repetitions=5 --benchmark_report_aggregates_only=true \
    --benchmark_min_time=0.1 --benchmark_out="$out/bench.json" --benchmark_out_format=json "$@"
fi

# ---- 2. instruction counts of the per-call benchmarks (callgrind; the peer cannot run under valgrind 3.19)
cg_args=""
if [ "$smoke" = 1 ]; then
  "$bin/exchange_bench_nopeer" --count_instructions=10 > "$out/count_smoke.tsv"  # the count mode works
fi
if [ "$callgrind" = 1 ] && [ -n "$valgrind" ]; then
  mkdir -p "$out/callgrind" "$out/copy_callgrind"
  if counted "the C calls" "$out/callgrind" --callgrind-out-file="$out/callgrind/cg.out" \
    "$bin/exchange_bench_nopeer" --count_instructions=$counts > "$out/callgrind/cases.tsv"; then
    cg_args="--callgrind $out/callgrind"
  fi
  # The copies' cache behaviour at 1, 16 and 256 MiB (simulated caches: why a strided copy is slower than memcpy).
  # L1 as detected (48 KiB, 12-way here); the last level as a model, 32 MiB 16-way: this VM reports a 508 MiB
  # direct-mapped L3, which valgrind would otherwise simulate.
  if counted "the copies' cache simulation" "$out/copy_callgrind" --cache-sim=yes --LL=33554432,16,64 \
    --callgrind-out-file="$out/copy_callgrind/cg.out" "$bin/exchange_bench_nopeer" --count_instructions=1 \
    --count_copies --count_filter="$copy_filter" > "$out/copy_callgrind/cases.tsv"; then
    cg_args="$cg_args --copy-callgrind $out/copy_callgrind"
  fi
elif [ "$callgrind" = 1 ]; then
  # Said, not skipped silently: without valgrind the report has no instruction counts (and a bench binary built before
  # valgrind's headers were installed cannot count: `bazel clean` after installing it).
  echo "bench/run.sh: no valgrind here, so no instruction counts (apt-get install valgrind; --no-callgrind to skip)" >&2
fi

# ---- 3. Python per call
py_args=""
if [ "$python" = 1 ]; then
  if [ "$smoke" = 1 ]; then
    python_bench --repeat 1 --min-time 0.001 --out "$out/python.json"
  else
    python_bench --repeat 7 --min-time 0.2 --out "$out/python.json"
    # Two more runs, separate processes, for the spread of each ratio between runs (a verdict near 1.0 in ns flips
    # between runs; the Ir decide where both sides run under callgrind).
    python_bench --repeat 7 --min-time 0.2 --out "$out/python-2.json"
    python_bench --repeat 7 --min-time 0.2 --out "$out/python-3.json"
    py_args="--python-runs $out/python-2.json,$out/python-3.json"
  fi
  if [ "$callgrind" = 1 ] && [ -n "$valgrind" ] && (
    export PYTHONPATH="$(cd "$bin/../python/array_api" && pwd)" PYTHONDONTWRITEBYTECODE=1 PYTHONNOUSERSITE=1
    mkdir -p "$out/python_callgrind"
    counted "the Python calls" "$out/python_callgrind" --dump-before=sched_yield \
      --callgrind-out-file="$out/python_callgrind/cg.out" /usr/bin/python3 bench/python_bench.py \
      --callgrind $python_counts > "$out/python_callgrind/cases.json"
  ); then
    py_args="$py_args --python-callgrind $out/python_callgrind"
  fi
  py_args="--python $out/python.json $py_args"
fi

# ---- 4. the report
check=""
[ "$smoke" = 1 ] && check="--check"
/usr/bin/python3 bench/report.py --bench "$out/bench.json" --meta "$out/meta.txt" $cg_args $py_args $check \
  --build "bazel -c opt (what README's commands build): //src:dlmap_array_api in //bench:exchange_bench, $pymod" \
  > "$out/report.md"
cat "$out/report.md"
if [ "$update_md" = 1 ]; then
  /usr/bin/python3 - "$out/report.md" BENCHMARKS.md "$section" <<'EOF'
import sys
report, md, section = sys.argv[1], sys.argv[2], sys.argv[3]
text = open(md, encoding="utf-8").read()
if section:  # another machine's tables, between their own markers (added at the end the first time)
    begin = "<!-- bench:begin %s (bench/run.sh --update-md --section %s) -->" % (section, section)
    end = "<!-- bench:end %s -->" % section
    if begin not in text:
        text = text.rstrip("\n") + "\n\n" + begin + "\n" + end + "\n"
else:
    begin, end = "<!-- bench:begin (bench/run.sh --update-md) -->", "<!-- bench:end -->"
i = text.index(begin) + len(begin)
j = text.index(end, i)
open(md, "w", encoding="utf-8").write(text[:i] + "\n" + open(report, encoding="utf-8").read() + text[j:])
EOF
  echo "run.sh: BENCHMARKS.md updated"
fi
echo "run.sh: results in $out"
