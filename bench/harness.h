// dlmap benchmarks — the harness: one op definition feeds both a Google Benchmark and the callgrind per-call count.
//
// An op is a copyable struct with
//   void Setup();                         before each timed run (may be called many times; keep it idempotent)
//   void Run();                           one call of the operation measured
//   void Finish(benchmark::State &state); after the timed loop: counters, bytes, items, correctness checks
//   double Items() const;                 operations per Run() (a lookup op runs every name once), usually 1
// Register(name, op) adds the Google Benchmark `name` and, when `count` is true, the count case run by
// `exchange_bench --count_instructions=N`: N calls of Run() between CALLGRIND_ZERO_STATS and
// CALLGRIND_DUMP_STATS_AT(name), so `valgrind --tool=callgrind` writes one dump per op whose total is
// N × Items() operations. Outside valgrind the client requests are no-ops and the count mode is a smoke run.
#ifndef DLMAP_BENCH_HARNESS_H_
#define DLMAP_BENCH_HARNESS_H_

#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define DLMAP_BENCH_HAS_CALLGRIND 1
#endif
#endif
#ifndef DLMAP_BENCH_HAS_CALLGRIND
#define DLMAP_BENCH_HAS_CALLGRIND 0
#define CALLGRIND_ZERO_STATS
#define CALLGRIND_DUMP_STATS_AT(name) ((void)(name))
#define RUNNING_ON_VALGRIND 0
#endif

namespace dlmap_bench {

struct CountCase {
  std::string name;
  std::function<double(int64_t calls)> run;  // returns the operations per call (Items())
};

// Every registered count case, in registration order (a function-local static: safe from static initializers
// in any translation unit).
inline std::vector<CountCase> &CountCases() {
  static std::vector<CountCase> cases;
  return cases;
}

// Replacements for benchmark::DoNotOptimize on scalars and pointers. libbenchmark 1.7.1 uses the two-alternative
// constraint "+m,r" under GCC, which GCC 12 miscompiles here (a lookup loop's sum read back as 0); one alternative
// is exact. Opaque(x): the compiler forgets what x holds (and all memory may have changed); Use(x): x is needed.
template <class T>
inline __attribute__((always_inline)) void Opaque(T &value) {
  asm volatile("" : "+r"(value) : : "memory");
}
template <class T>
inline __attribute__((always_inline)) void Use(const T &value) {
  asm volatile("" : : "r"(value) : "memory");
}

// Stops the run with a message: a benchmark whose operation fails measures nothing.
[[noreturn]] inline void Die(const std::string &name, const std::string &why) {
  std::fprintf(stderr, "exchange_bench: %s: %s\n", name.c_str(), why.c_str());
  std::exit(2);
}

template <class Op>
void Register(const std::string &name, Op op, bool count = true) {
  benchmark::RegisterBenchmark(name.c_str(), [op](benchmark::State &state) mutable {
    op.Setup();
    for (auto _ : state) op.Run();
    op.Finish(state);
  });
  if (!count) return;
  CountCases().push_back({name, [op, name](int64_t calls) mutable {
                            op.Setup();
                            for (int64_t i = 0; i < 64 && i < calls; i++) op.Run();  // warm caches, bind symbols
                            CALLGRIND_ZERO_STATS;
                            for (int64_t i = 0; i < calls; i++) op.Run();
                            CALLGRIND_DUMP_STATS_AT(name.c_str());
                            return op.Items();
                          }});
}

}  // namespace dlmap_bench

#endif  // DLMAP_BENCH_HARNESS_H_
