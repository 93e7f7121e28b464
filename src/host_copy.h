/* dlmap core — the host copy: any strides to compact row-major (src/host_copy.c). */
#ifndef DLMAP_SRC_HOST_COPY_H_
#define DLMAP_SRC_HOST_COPY_H_

#include "src/layout.h"

/* Copies a host tensor of `layout` whose first element is at src into compact row-major dst (layout->bytes long).
 * Both buffers are host memory; the layout has elements (count > 0: dlmap__copy_compact copies only then). */
void dlmap__copy_to_compact(void *dst, const void *src, const dlmap__copy_layout *layout);

#endif /* DLMAP_SRC_HOST_COPY_H_ */
