// dlmap benchmarks — the peer: libtorch's DLPack converter (at::toDLPack + deleter, at::fromDLPack) on the same shapes as dlmap's per-call benchmarks.
//
// Built only when @dlmap_config found libtorch-dev (HAS_LIBTORCH); linked into //bench:exchange_bench, which
// calls RegisterTorchPeer(). ATen ships its own DLPack header, so this file never includes dlmap's.
#include <ATen/ATen.h>
#include <ATen/DLConvertor.h>

#include <cstring>
#include <string>
#include <vector>

#include "bench/harness.h"

namespace dlmap_bench {
namespace {

std::vector<int64_t> TorchShape(int ndim) {  // the shapes of exchange_bench.cc's ShapeOf
  switch (ndim) {
    case 1: return {1024};
    case 4: return {8, 4, 4, 8};
    case 8: return {2, 2, 2, 4, 2, 2, 4, 4};
    default: Die("torch", "ndim must be 1, 4 or 8");
  }
}

// __dlpack__ in PyTorch: at::toDLPack (a new ATenDLMTensor holding a reference), then the consumer's deleter.
struct TorchToDLPackOp {
  int ndim;
  at::Tensor tensor;
  explicit TorchToDLPackOp(int ndim_) : ndim(ndim_) {}
  void Setup() {
    if (!tensor.defined()) tensor = at::empty(TorchShape(ndim), at::kFloat);
  }
  void Run() {
    DLManagedTensor *managed = at::toDLPack(tensor);
    Opaque(managed);
    managed->deleter(managed);
  }
  void Finish(benchmark::State &) {}
  double Items() const { return 1; }
};

// from_dlpack in PyTorch: at::fromDLPack wraps the producer's memory in a Tensor (a view); dropping the Tensor
// runs the producer's deleter.
struct TorchFromDLPackOp {
  int ndim;
  bool permuted;
  std::vector<int64_t> shape, strides;
  std::vector<float> data;
  DLManagedTensor managed;
  int64_t deletes = 0;
  TorchFromDLPackOp(int ndim_, bool permuted_) : ndim(ndim_), permuted(permuted_) {}
  static void Deleter(DLManagedTensor *self) { ++*static_cast<int64_t *>(self->manager_ctx); }
  void Setup() {
    shape = TorchShape(ndim);
    strides.assign(shape.size(), 0);
    int64_t stride = 1;
    for (size_t k = 0; k < shape.size(); k++) {
      const size_t i = permuted ? k : shape.size() - 1 - k;
      strides[i] = stride;
      stride *= shape[i];
    }
    data.assign(static_cast<size_t>(stride), 0.0f);
    std::memset(&managed, 0, sizeof managed);
    managed.dl_tensor.data = data.data();
    managed.dl_tensor.device.device_type = kDLCPU;
    managed.dl_tensor.ndim = ndim;
    managed.dl_tensor.dtype.code = kDLFloat;
    managed.dl_tensor.dtype.bits = 32;
    managed.dl_tensor.dtype.lanes = 1;
    managed.dl_tensor.shape = shape.data();
    managed.dl_tensor.strides = strides.data();
    managed.manager_ctx = &deletes;
    managed.deleter = Deleter;
  }
  void Run() {
    at::Tensor view = at::fromDLPack(&managed);
    Use(view.unsafeGetTensorImpl());
  }
  void Finish(benchmark::State &state) {
    if (deletes < state.iterations()) Die("torch fromDLPack", "the deleter did not run once per Tensor");
  }
  double Items() const { return 1; }
};

}  // namespace

void RegisterTorchPeer() {
  for (int ndim : {1, 4, 8}) {
    const std::string d = "/ndim:" + std::to_string(ndim);
    Register("peer/torch_toDLPack_deleter" + d, TorchToDLPackOp(ndim));
    Register("peer/torch_fromDLPack/compact" + d, TorchFromDLPackOp(ndim, false));
    if (ndim > 1) Register("peer/torch_fromDLPack/permuted" + d, TorchFromDLPackOp(ndim, true));
  }
}

}  // namespace dlmap_bench
