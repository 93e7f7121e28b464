// dlmap benchmarks — the one binary: export/import cost against the malloc/free and struct-fill floors (and libtorch), re2c lookups against strcmp loops, host copies against memcpy.
//
// bazel run -c opt //bench:exchange_bench                      Google Benchmark run (all flags of the library)
// exchange_bench --count_instructions=N [--count_filter=RE]   the per-call ops, N calls each, for callgrind
// exchange_bench --count_instructions=N --count_copies ...     the copies too (for callgrind --cache-sim=yes)
// bench/run.sh does both and writes the report (BENCHMARKS.md). Allocations are counted twice: a counting
// dlmap_allocator where the API takes one, and the linker's --wrap of the malloc family over every object
// linked statically (libdlmap.a included), so "allocs" = 0 proves that dlmap itself allocated nothing.
#include <dlmap/dlmap.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <strings.h>

#include <algorithm>
#include <regex>
#include <string>
#include <vector>

#include "bench/harness.h"

// ---- allocation counting: -Wl,--wrap=malloc,... (see BUILD) -----------------------------------------------------
// Plain thread-local counters: no atomic read-modify-write on the measured paths (the floors pay the same).
static thread_local uint64_t g_allocs = 0;
static thread_local uint64_t g_frees = 0;

// The cache sizes the host copies read and the streaming thresholds they derived, as one line (src/host_caches.h:
// internal to the library, declared here as the bench's only use of it).
extern "C" int dlmap__host_caches_describe(char *text, size_t capacity);

extern "C" {
void *__real_malloc(size_t size);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t size);
void *__real_aligned_alloc(size_t alignment, size_t size);
int __real_posix_memalign(void **out, size_t alignment, size_t size);
void __real_free(void *p);

void *__wrap_malloc(size_t size) {
  ++g_allocs;
  return __real_malloc(size);
}
void *__wrap_calloc(size_t n, size_t size) {
  ++g_allocs;
  return __real_calloc(n, size);
}
void *__wrap_realloc(void *p, size_t size) {
  ++g_allocs;
  return __real_realloc(p, size);
}
void *__wrap_aligned_alloc(size_t alignment, size_t size) {
  ++g_allocs;
  return __real_aligned_alloc(alignment, size);
}
int __wrap_posix_memalign(void **out, size_t alignment, size_t size) {
  ++g_allocs;
  return __real_posix_memalign(out, alignment, size);
}
void __wrap_free(void *p) {
  if (p != nullptr) ++g_frees;
  __real_free(p);
}
}

namespace dlmap_bench {
namespace {

// ---- shared fixtures ------------------------------------------------------------------------------------------

// The shapes of the per-call benchmarks: float32, 64 KiB or less of (never touched) data.
std::vector<int64_t> ShapeOf(int ndim) {
  switch (ndim) {
    case 1: return {1024};
    case 4: return {8, 4, 4, 8};
    case 8: return {2, 2, 2, 4, 2, 2, 4, 4};
    default: Die("shape", "ndim must be 1, 4 or 8");
  }
}

std::vector<int64_t> CompactStrides(const std::vector<int64_t> &shape) {
  std::vector<int64_t> strides(shape.size());
  int64_t stride = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    strides[i] = stride;
    stride *= shape[i];
  }
  return strides;
}

// Column-major strides: the full reversal, a permutation of a compact layout (what a transposed view carries).
std::vector<int64_t> PermutedStrides(const std::vector<int64_t> &shape) {
  std::vector<int64_t> strides(shape.size());
  int64_t stride = 1;
  for (size_t i = 0; i < shape.size(); i++) {
    strides[i] = stride;
    stride *= shape[i];
  }
  return strides;
}

alignas(64) float g_data[1 << 14];  // the per-call tensors' data (never read)

DLDataType Float32() {
  DLDataType t;
  t.code = kDLFloat;
  t.bits = 32;
  t.lanes = 1;
  return t;
}

std::string Check(int32_t status, const dlmap_error &err) {
  return status == DLMAP_OK ? std::string() : std::string(err.id) + ": " + err.message;
}

// A dlmap_allocator that counts and records what dlmap asks for, then uses malloc's aligned allocation.
struct CountingAllocator {
  uint64_t calls = 0;
  size_t last_size = 0, last_alignment = 0;
  dlmap_allocator api{};
  void Bind() {
    api.allocate = [](void *ctx, size_t size, size_t alignment) -> void * {
      auto *self = static_cast<CountingAllocator *>(ctx);
      self->calls++;
      self->last_size = size;
      self->last_alignment = alignment;
      return std::aligned_alloc(alignment, size);
    };
    api.release = [](void *, void *p) { std::free(p); };
    api.ctx = this;
  }
};

// The size and alignment dlmap's export asks its allocator for (a view: header, shape and strides).
struct ExportAllocation {
  size_t size, alignment;
};
ExportAllocation MeasureExportAllocation(int ndim) {
  const std::vector<int64_t> shape = ShapeOf(ndim), strides = CompactStrides(shape);
  CountingAllocator counting;
  counting.Bind();
  dlmap_array array = dlmap_array_default();
  array.data = g_data;
  array.device_type = kDLCPU;
  array.dtype = Float32();
  array.ndim = ndim;
  array.shape = shape.data();
  array.strides = strides.data();
  dlmap_export_request request = dlmap_export_request_default();
  request.has_max_version = true;
  request.max_version = dlmap_version_current();
  request.allocator = &counting.api;
  dlmap_exported out;
  dlmap_error err;
  const std::string failure = Check(dlmap_export(&array, &request, &out, &err), err);
  if (!failure.empty()) Die("export allocation", failure);
  out.versioned->deleter(out.versioned);
  if (counting.calls != 1) Die("export allocation", "expected exactly one allocation per export");
  return {counting.last_size, counting.last_alignment};
}

// ---- harness overhead -----------------------------------------------------------------------------------------

struct EmptyOp {
  void Setup() {}
  void Run() { benchmark::ClobberMemory(); }
  void Finish(benchmark::State &) {}
  double Items() const { return 1; }
};

// ---- export + release (__dlpack__ then the consumer's deleter) -------------------------------------------------

struct ExportOp {
  bool versioned;
  int ndim;
  std::vector<int64_t> shape, strides;
  dlmap_array array = dlmap_array_default();
  dlmap_export_request request = dlmap_export_request_default();
  dlmap_exported out{};
  dlmap_error err{};
  uint64_t releases = 0, allocs0 = 0, frees0 = 0, releases0 = 0;

  ExportOp(bool versioned_, int ndim_) : versioned(versioned_), ndim(ndim_) {}
  void Setup() {
    shape = ShapeOf(ndim);
    strides = CompactStrides(shape);  // a framework passes its strides (NumPy, PyTorch and JAX always do)
    array = dlmap_array_default();
    array.data = g_data;
    array.device_type = kDLCPU;
    array.dtype = Float32();
    array.ndim = ndim;
    array.shape = shape.data();
    array.strides = strides.data();
    array.owner = &releases;
    array.release = [](void *owner) { ++*static_cast<uint64_t *>(owner); };
    request = dlmap_export_request_default();
    request.has_max_version = versioned;  // None: a legacy DLManagedTensor; (1, 3): versioned
    if (versioned) request.max_version = dlmap_version_current();
    const std::string failure = Check(dlmap_export(&array, &request, &out, &err), err);
    if (!failure.empty()) Die("export", failure);
    if ((out.versioned != nullptr) != versioned) Die("export", "wrong struct kind");
    Release();
    allocs0 = g_allocs;
    frees0 = g_frees;
    releases0 = releases;
  }
  void Release() {
    if (versioned) {
      out.versioned->deleter(out.versioned);
    } else {
      out.legacy->deleter(out.legacy);
    }
  }
  void Run() {
    if (__builtin_expect(dlmap_export(&array, &request, &out, &err) != DLMAP_OK, 0)) Die("export", err.message);
    Release();
  }
  void Finish(benchmark::State &state) {
    const double n = static_cast<double>(state.iterations());
    if (releases - releases0 != static_cast<uint64_t>(state.iterations())) Die("export", "owner not released exactly once per export");
    state.counters["allocs"] = static_cast<double>(g_allocs - allocs0) / n;
    state.counters["frees"] = static_cast<double>(g_frees - frees0) / n;
  }
  double Items() const { return 1; }
};

// ---- export + release of a layout other than the previous call's: two shapes in turn, neither the other cases', so
// that no plan the unprepared export remembers (src/export_plan_cache.c) ever serves: every call runs every check ----

// Two layouts in turn, derived from a case's shape: the first extent + 1 and + 2, neither any other case's layout.
struct TwoLayouts {
  std::vector<int64_t> shapes[2], strides_of[2];
  bool flip = false;
  void Make(const std::vector<int64_t> &shape) {
    for (int i = 0; i < 2; i++) {
      shapes[i] = shape;
      shapes[i][0] += i + 1;
      strides_of[i] = CompactStrides(shapes[i]);
    }
  }
  // The next layout: shapes[i] and strides_of[i].
  int Next() {
    flip = !flip;
    return flip ? 1 : 0;
  }
};

struct NewLayoutExportOp : ExportOp {
  TwoLayouts layouts;
  NewLayoutExportOp(bool versioned_, int ndim_) : ExportOp(versioned_, ndim_) {}
  void Setup() {
    ExportOp::Setup();
    layouts.Make(shape);
  }
  void Run() {
    const int i = layouts.Next();
    array.shape = layouts.shapes[i].data();
    array.strides = layouts.strides_of[i].data();
    ExportOp::Run();
  }
};

// ---- prepared export + release: the plan made once (dlmap_export_plan_create), then per call only the block -------

struct PreparedExportOp : ExportOp {
  dlmap_export_plan *plan = nullptr;
  PreparedExportOp(bool versioned_, int ndim_) : ExportOp(versioned_, ndim_) {}
  void Setup() {
    ExportOp::Setup();
    dlmap_export_plan_free(plan);
    plan = nullptr;
    const std::string failure = Check(dlmap_export_plan_create(&array, &request, &plan, &err), err);
    if (!failure.empty()) Die("export plan", failure);
  }
  void Run() {
    if (__builtin_expect(dlmap_export_planned(plan, g_data, &releases, array.release, &out, &err) != DLMAP_OK, 0)) {
      Die("prepared export", err.message);
    }
    Release();
  }
};

// ---- the floors ------------------------------------------------------------------------------------------------

// One malloc/free pair of the export block's size (aligned: the aligned_alloc(alignment) pair instead).
struct MallocFreeOp {
  size_t size, alignment;  // alignment 0: plain malloc
  void Setup() {}
  void Run() {
    void *p = alignment == 0 ? std::malloc(size) : std::aligned_alloc(alignment, size);
    Opaque(p);
    std::free(p);
  }
  void Finish(benchmark::State &state) { state.SetLabel(std::to_string(size) + " B"); }
  double Items() const { return 1; }
};

// The least an exporter or importer writes: a DLManagedTensorVersioned and ndim shape and strides, from a
// description the compiler cannot see through.
struct StructFillOp {
  int ndim;
  std::vector<int64_t> shape, strides;
  struct Source {
    void *data;
    DLDevice device;
    DLDataType dtype;
    int32_t ndim;
    const int64_t *shape, *strides;
    uint64_t byte_offset;
  } source{};
  struct Block {
    struct DLManagedTensorVersioned tensor;
    int64_t dims[2 * 8];
  };
  alignas(64) Block block{};

  explicit StructFillOp(int ndim_) : ndim(ndim_) {}
  void Setup() {
    shape = ShapeOf(ndim);
    strides = CompactStrides(shape);
    source = Source{g_data, {kDLCPU, 0}, Float32(), ndim, shape.data(), strides.data(), 0};
  }
  static void NoDeleter(struct DLManagedTensorVersioned *) {}
  void Run() {
    const Source *s = &source;
    Block *b = &block;
    Opaque(s);
    Opaque(b);
    const int32_t n = s->ndim;
    b->tensor.version.major = 1;
    b->tensor.version.minor = 3;
    b->tensor.manager_ctx = b;
    b->tensor.deleter = NoDeleter;
    b->tensor.flags = 0;
    b->tensor.dl_tensor.data = s->data;
    b->tensor.dl_tensor.device = s->device;
    b->tensor.dl_tensor.ndim = n;
    b->tensor.dl_tensor.dtype = s->dtype;
    std::memcpy(b->dims, s->shape, static_cast<size_t>(n) * sizeof(int64_t));
    std::memcpy(b->dims + n, s->strides, static_cast<size_t>(n) * sizeof(int64_t));
    b->tensor.dl_tensor.shape = b->dims;
    b->tensor.dl_tensor.strides = b->dims + n;
    b->tensor.dl_tensor.byte_offset = s->byte_offset;
    benchmark::ClobberMemory();
  }
  void Finish(benchmark::State &) {}
  double Items() const { return 1; }
};

// ---- import as a view (from_dlpack: every check, then release) -------------------------------------------------

struct ImportViewOp {
  int ndim;
  bool permuted;
  std::vector<int64_t> shape, strides;
  struct DLManagedTensorVersioned tensor{};
  dlmap_import_request request = dlmap_import_request_default();
  dlmap_imported out{};
  dlmap_error err{};
  CountingAllocator allocator;
  uint64_t deletes = 0, allocs0 = 0, deletes0 = 0;

  ImportViewOp(int ndim_, bool permuted_) : ndim(ndim_), permuted(permuted_) {}
  static void Deleter(struct DLManagedTensorVersioned *self) { ++*static_cast<uint64_t *>(self->manager_ctx); }
  void Setup() {
    shape = ShapeOf(ndim);
    strides = permuted ? PermutedStrides(shape) : CompactStrides(shape);
    tensor = {};
    const dlmap_version v = dlmap_version_current();
    tensor.version.major = v.major;
    tensor.version.minor = v.minor;
    tensor.manager_ctx = &deletes;
    tensor.deleter = Deleter;
    tensor.dl_tensor.data = g_data;
    tensor.dl_tensor.device.device_type = kDLCPU;
    tensor.dl_tensor.dtype = Float32();
    tensor.dl_tensor.ndim = ndim;
    tensor.dl_tensor.shape = shape.data();
    tensor.dl_tensor.strides = strides.data();
    allocator.Bind();
    request = dlmap_import_request_default();
    request.layout = DLMAP_LAYOUT_COMPACT_PERMUTATION;  // XLA's constraint: both layouts qualify, so a view
    request.allocator = &allocator.api;
    const std::string failure = Check(dlmap_import_versioned(&tensor, &request, &out, &err), err);
    if (!failure.empty()) Die("import", failure);
    if (out.copied || out.tensor.data != g_data) Die("import", "not a view");
    dlmap_imported_release(&out);
    allocs0 = g_allocs + allocator.calls;
    deletes0 = deletes;
  }
  void Run() {
    if (__builtin_expect(dlmap_import_versioned(&tensor, &request, &out, &err) != DLMAP_OK, 0)) {
      Die("import", err.message);
    }
    Use(out.tensor.data);
    dlmap_imported_release(&out);
  }
  void Finish(benchmark::State &state) {
    if (deletes - deletes0 != static_cast<uint64_t>(state.iterations())) Die("import", "deleter not called exactly once per import");
    state.counters["allocs"] = static_cast<double>(g_allocs + allocator.calls - allocs0) / static_cast<double>(state.iterations());
  }
  double Items() const { return 1; }
};

// ---- name lookups: the re2c matchers against a strcmp loop over the same table ---------------------------------

struct LookupName {
  const char *name;
  int64_t value;
};
#define DLMAP_DTYPE_KEY(code, bits) ((int64_t)(code) << 8 | (int64_t)(bits))
#include "bench/lookup_names.inc"
#undef DLMAP_DTYPE_KEY

enum class Matcher { kRe2c, kStrcmp, kStrcasecmp };
enum class Table { kDevice, kDtype, kPlatform };

struct LookupOp {
  Table table;
  Matcher matcher;
  const LookupName *names = nullptr;
  size_t count = 0;
  std::vector<size_t> lengths;
  int64_t sum = 0, expected = 0;

  LookupOp(Table t, Matcher m) : table(t), matcher(m) {}
  void Setup() {
    switch (table) {
      case Table::kDevice: names = kDeviceNames, count = sizeof kDeviceNames / sizeof kDeviceNames[0]; break;
      case Table::kDtype: names = kDtypeNames, count = sizeof kDtypeNames / sizeof kDtypeNames[0]; break;
      case Table::kPlatform: names = kPlatformNames, count = sizeof kPlatformNames / sizeof kPlatformNames[0]; break;
    }
    lengths.clear();
    expected = 0;
    for (size_t i = 0; i < count; i++) {
      lengths.push_back(std::strlen(names[i].name));
      expected += names[i].value;
    }
    for (size_t i = 0; i < count; i++) {
      const int64_t got = matcher == Matcher::kRe2c ? Re2c(i) : Loop(names[i].name);
      if (got != names[i].value) Die("lookup", std::string(names[i].name) + " not found or mapped to another value");
    }
    sum = 0;
    Run();
    if (sum != expected) Die("lookup", "checksum " + std::to_string(sum) + " != " + std::to_string(expected));
  }
  int64_t Re2c(size_t i) const {
    switch (table) {
      case Table::kDevice: {
        int32_t v = -1;
        dlmap_device_type_parse(names[i].name, lengths[i], &v);
        return v;
      }
      case Table::kDtype: {
        DLDataType t{};
        if (!dlmap_dtype_parse(names[i].name, lengths[i], &t)) return -1;
        return (int64_t)t.code << 8 | t.bits;
      }
      case Table::kPlatform: {
        dlmap_platform p = DLMAP_PLATFORM_NONE;
        if (!dlmap_platform_parse(names[i].name, lengths[i], &p)) return -1;
        return p;
      }
    }
    return -1;
  }
  // What a hand-written lookup does: compare against every table row until one matches.
  int64_t Loop(const char *query) const {
    for (size_t j = 0; j < count; j++) {
      if ((matcher == Matcher::kStrcmp ? std::strcmp(query, names[j].name) : strcasecmp(query, names[j].name)) == 0) {
        return names[j].value;
      }
    }
    return -1;
  }
  void Run() {
    int64_t s = 0;
    for (size_t i = 0; i < count; i++) {
      const char *query = names[i].name;
      Opaque(query);
      s += matcher == Matcher::kRe2c ? Re2c(i) : Loop(query);
    }
    sum = s;
    Use(sum);
  }
  void Finish(benchmark::State &state) {
    state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(count));
    state.SetLabel(std::to_string(count) + " names");
  }
  double Items() const { return static_cast<double>(count); }
};

// ---- host copies: strided → compact and compact → compact through import, against memcpy ------------------------

// One source and one destination buffer shared by every copy benchmark (grown on demand, pre-faulted).
struct CopyBuffers {
  char *src = nullptr, *dst = nullptr;
  size_t src_cap = 0, dst_cap = 0;
  static void Grow(char **p, size_t *cap, size_t need) {
    if (*cap >= need) return;
    std::free(*p);
    need = (need + 4095) / 4096 * 4096;
    *p = static_cast<char *>(std::aligned_alloc(4096, need));
    if (*p == nullptr) Die("copy", "out of memory");
    std::memset(*p, 0, need);  // fault every page in before timing
    *cap = need;
  }
};
CopyBuffers g_buffers;

// A framework's caching allocator: hands out the pre-faulted destination, frees nothing.
void *ArenaAllocate(void *, size_t size, size_t) { return size <= g_buffers.dst_cap ? g_buffers.dst : nullptr; }
void ArenaRelease(void *, void *) {}
const dlmap_allocator kArena = {ArenaAllocate, ArenaRelease, nullptr};

enum class CopyKind { kMemcpy, kCompact, kRows, kTransposed, kStep2 };

const char *CopyKindName(CopyKind k) {
  switch (k) {
    case CopyKind::kMemcpy: return "memcpy";
    case CopyKind::kCompact: return "compact";
    case CopyKind::kRows: return "rows";
    case CopyKind::kTransposed: return "transposed";
    case CopyKind::kStep2: return "step2";
  }
  return "?";
}

struct CopyOp {
  CopyKind kind;
  size_t bytes;
  int64_t shape[2] = {0, 0}, strides[2] = {0, 0};
  size_t src_bytes = 0;
  struct DLManagedTensorVersioned tensor{};
  dlmap_import_request request = dlmap_import_request_default();
  dlmap_imported out{};
  dlmap_error err{};
  char *dst_data = nullptr;
  bool verified = false;

  CopyOp(CopyKind k, size_t b) : kind(k), bytes(b) {}
  static void NoDeleter(struct DLManagedTensorVersioned *) {}
  void Setup() {
    const int64_t n = static_cast<int64_t>(bytes / sizeof(float));
    const int64_t side = static_cast<int64_t>(std::llround(std::sqrt(static_cast<double>(n))));
    if (side * side != n) Die("copy", "size must be 4 × a square");
    shape[0] = shape[1] = side;
    switch (kind) {
      case CopyKind::kMemcpy:
      case CopyKind::kCompact: strides[0] = side, strides[1] = 1, src_bytes = bytes; break;
      case CopyKind::kRows: strides[0] = side + 16, strides[1] = 1, src_bytes = (side + 16) * side * 4; break;
      case CopyKind::kTransposed: strides[0] = 1, strides[1] = side, src_bytes = bytes; break;
      case CopyKind::kStep2: strides[0] = 2 * side, strides[1] = 2, src_bytes = 2 * bytes; break;
    }
    CopyBuffers::Grow(&g_buffers.src, &g_buffers.src_cap, src_bytes);
    CopyBuffers::Grow(&g_buffers.dst, &g_buffers.dst_cap, bytes + 4096);
    tensor = {};
    tensor.version.major = 1;
    tensor.deleter = NoDeleter;
    tensor.dl_tensor.data = g_buffers.src;
    tensor.dl_tensor.device.device_type = kDLCPU;
    tensor.dl_tensor.dtype = Float32();
    tensor.dl_tensor.ndim = 2;
    tensor.dl_tensor.shape = shape;
    tensor.dl_tensor.strides = strides;
    request = dlmap_import_request_default();
    request.allocator = &kArena;
    if (kind == CopyKind::kCompact) {
      request.copy = DLMAP_COPY_ALWAYS;  // copy=True
    } else {
      request.layout = DLMAP_LAYOUT_ROW_MAJOR;  // copy=None, row-major wanted: the strided ones need a copy
    }
    dst_data = g_buffers.dst + 64;  // where dlmap's copy lands (after its 64-byte shape/strides header)
    if (!verified) Verify();
  }
  void Verify() {
    // Every source element gets its own value; every destination element must be the one its index names.
    float *src = reinterpret_cast<float *>(g_buffers.src);
    for (size_t i = 0; i < src_bytes / sizeof(float); i++) src[i] = static_cast<float>(i % 16777213);
    Run();
    if (kind != CopyKind::kMemcpy && out.tensor.data != nullptr) Die("copy", "not released");
    const float *dst = reinterpret_cast<const float *>(dst_data);
    const int64_t step = std::max<int64_t>(1, shape[0] * shape[1] / 4099);
    for (int64_t k = 0; k < shape[0] * shape[1]; k += step) {
      const int64_t i = k / shape[1], j = k % shape[1];
      const int64_t from = kind == CopyKind::kMemcpy ? k : i * strides[0] + j * strides[1];
      if (dst[k] != static_cast<float>(from % 16777213)) Die("copy", std::string(CopyKindName(kind)) + ": wrong element");
    }
    verified = true;
  }
  void Run() {
    if (kind == CopyKind::kMemcpy) {
      std::memcpy(dst_data, g_buffers.src, bytes);
      benchmark::ClobberMemory();
      return;
    }
    if (__builtin_expect(dlmap_import_versioned(&tensor, &request, &out, &err) != DLMAP_OK, 0)) Die("copy", err.message);
    if (__builtin_expect(!out.copied || out.tensor.data != dst_data, 0)) Die("copy", "not copied into the arena");
    dlmap_imported_release(&out);
    benchmark::ClobberMemory();
  }
  void Finish(benchmark::State &state) { state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(bytes)); }
  double Items() const { return static_cast<double>(bytes) / 1024; }  // count mode: events per KiB copied
};

// ---- import as a view of a layout other than the previous call's (as NewLayoutExportOp) --------------------------

struct NewLayoutImportViewOp : ImportViewOp {
  TwoLayouts layouts;
  NewLayoutImportViewOp(int ndim_) : ImportViewOp(ndim_, false) {}
  void Setup() {
    ImportViewOp::Setup();
    layouts.Make(shape);
  }
  void Run() {
    const int i = layouts.Next();
    tensor.dl_tensor.shape = layouts.shapes[i].data();
    tensor.dl_tensor.strides = layouts.strides_of[i].data();
    ImportViewOp::Run();
  }
};

// ---- prepared import as a view: the plan made once (dlmap_import_plan_create), then per call only the match -------

struct PreparedImportViewOp : ImportViewOp {
  dlmap_import_plan *plan = nullptr;
  PreparedImportViewOp(int ndim_, bool permuted_) : ImportViewOp(ndim_, permuted_) {}
  void Setup() {
    ImportViewOp::Setup();
    dlmap_import_plan_free(plan);
    plan = nullptr;
    const dlmap_version v = {tensor.version.major, tensor.version.minor};
    const std::string failure =
        Check(dlmap_import_plan_create(&tensor.dl_tensor, true, v, tensor.flags, &request, &plan, &err), err);
    if (!failure.empty()) Die("import plan", failure);
  }
  void Run() {
    if (__builtin_expect(dlmap_import_versioned_planned(plan, &tensor, &out, &err) != DLMAP_OK, 0)) {
      Die("prepared import", err.message);
    }
    Use(out.tensor.data);
    dlmap_imported_release(&out);
  }
};

std::string SizeName(size_t bytes) {
  if (bytes >= (1u << 20)) return std::to_string(bytes >> 20) + "MiB";
  return std::to_string(bytes >> 10) + "KiB";
}

void RegisterAll() {
  Register("harness/empty", EmptyOp{});
  for (int ndim : {1, 4, 8}) {
    const std::string d = "/ndim:" + std::to_string(ndim);
    const ExportAllocation a = MeasureExportAllocation(ndim);
    Register("export/legacy" + d, ExportOp(false, ndim));
    Register("export/versioned" + d, ExportOp(true, ndim));
    Register("export/new_layout/versioned" + d, NewLayoutExportOp(true, ndim));
    Register("export/prepared/legacy" + d, PreparedExportOp(false, ndim));
    Register("export/prepared/versioned" + d, PreparedExportOp(true, ndim));
    Register("floor/malloc_free" + d, MallocFreeOp{a.size, 0});
    Register("floor/aligned_alloc_free" + d, MallocFreeOp{a.size, 64});
    Register("floor/struct_fill" + d, StructFillOp(ndim));
    Register("import/view/compact" + d, ImportViewOp(ndim, false));
    if (ndim > 1) Register("import/view/permuted" + d, ImportViewOp(ndim, true));  // 1-D has one layout
    Register("import/new_layout/compact" + d, NewLayoutImportViewOp(ndim));
    Register("import/prepared_view/compact" + d, PreparedImportViewOp(ndim, false));
    if (ndim > 1) Register("import/prepared_view/permuted" + d, PreparedImportViewOp(ndim, true));
  }
  for (Table t : {Table::kDevice, Table::kDtype, Table::kPlatform}) {
    const std::string base = t == Table::kDevice ? "lookup/device/" : t == Table::kDtype ? "lookup/dtype/" : "lookup/platform/";
    Register(base + "re2c", LookupOp(t, Matcher::kRe2c));
    Register(base + "strcmp", LookupOp(t, Matcher::kStrcmp));
    Register(base + "strcasecmp", LookupOp(t, Matcher::kStrcasecmp));
  }
}

void RegisterCopies() {
  for (size_t bytes = 4u << 10; bytes <= (256u << 20); bytes *= 16) {
    for (CopyKind k : {CopyKind::kMemcpy, CopyKind::kCompact, CopyKind::kRows, CopyKind::kTransposed, CopyKind::kStep2}) {
      Register(std::string("copy/") + CopyKindName(k) + "/" + SizeName(bytes), CopyOp(k, bytes));
    }
  }
}

}  // namespace

#if DLMAP_BENCH_HAS_TORCH
void RegisterTorchPeer();  // bench/torch_peer.cc
#endif

}  // namespace dlmap_bench

int main(int argc, char **argv) {
  using namespace dlmap_bench;
  int64_t count_calls = 0;
  std::string count_filter;
  bool count_copies = false;
  std::vector<char *> rest;
  for (int i = 0; i < argc; i++) {
    const std::string arg = argv[i];
    if (arg.rfind("--count_instructions=", 0) == 0) {
      count_calls = std::atoll(arg.c_str() + 21);
    } else if (arg.rfind("--count_filter=", 0) == 0) {
      count_filter = arg.substr(15);
    } else if (arg == "--count_copies") {
      count_copies = true;
    } else {
      rest.push_back(argv[i]);
    }
  }
  RegisterAll();
#if DLMAP_BENCH_HAS_TORCH
  RegisterTorchPeer();
  benchmark::AddCustomContext("peer", "libtorch (at::toDLPack / at::fromDLPack)");
#else
  benchmark::AddCustomContext("peer", "none: libtorch-dev was not found at configure time");
#endif
  RegisterCopies();
  char caches[512];
  dlmap__host_caches_describe(caches, sizeof caches);  // the sizes the host copies were sized from
  benchmark::AddCustomContext("host_copy_caches", caches);
  for (int ndim : {1, 4, 8}) {
    const ExportAllocation a = MeasureExportAllocation(ndim);
    benchmark::AddCustomContext("export_block_ndim" + std::to_string(ndim),
                                std::to_string(a.size) + " B, alignment " + std::to_string(a.alignment));
  }

  if (count_calls > 0) {
    // One line per case: name, calls, operations per call. Under callgrind each case is one dump.
    std::printf("count mode: %lld calls per case, callgrind %s\n", static_cast<long long>(count_calls),
                RUNNING_ON_VALGRIND ? "running" : (DLMAP_BENCH_HAS_CALLGRIND ? "not running (no-op)" : "header missing"));
    const std::regex filter(count_filter.empty() ? std::string(".") : count_filter);
    for (CountCase &c : CountCases()) {
      if (!std::regex_search(c.name, filter)) continue;
      if (c.name.rfind("copy/", 0) == 0 && !count_copies) continue;  // per KiB, for the cache simulation
      const double items = c.run(count_calls);
      std::printf("%s\t%lld\t%g\n", c.name.c_str(), static_cast<long long>(count_calls), items);
    }
    return 0;
  }
  int rest_argc = static_cast<int>(rest.size());
  benchmark::Initialize(&rest_argc, rest.data());
  if (benchmark::ReportUnrecognizedArguments(rest_argc, rest.data())) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
