/* dlmap core — the one place that runs a producer's deleter on a managed tensor whose struct (legacy DLManagedTensor
 * or DLManagedTensorVersioned) is known only at run time. Import, the Python binding's capsules and arrays all call
 * this instead of repeating the two-way dispatch. */
#include "src/internal.h"

void dlmap_managed_tensor_delete(void *managed, bool versioned) {
  if (managed == NULL) return;
  if (versioned) {
    struct DLManagedTensorVersioned *tensor = (struct DLManagedTensorVersioned *)managed;
    if (tensor->deleter != NULL) tensor->deleter(tensor);
  } else {
    DLManagedTensor *tensor = (DLManagedTensor *)managed;
    if (tensor->deleter != NULL) tensor->deleter(tensor);
  }
}
