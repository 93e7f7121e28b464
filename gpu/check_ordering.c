/* dlmap GPU check — the stream-ordering check (see gpu/check_ordering.h), over the device interface. */
#include "gpu/check_ordering.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "dlmap/dlmap.h"

/* Counts a failure; the first one's text is kept. */
static void failed(check_ordering_result *out, const char *format, ...) {
  if (out->failures++ > 0) return;
  va_list args;
  va_start(args, format);
  vsnprintf(out->message, sizeof out->message, format, args);
  va_end(args);
}

static void release(dlmap_exported *out) {
  if (out->versioned != NULL) out->versioned->deleter(out->versioned);
  if (out->legacy != NULL) out->legacy->deleter(out->legacy);
  memset(out, 0, sizeof *out);
}

#define DEVICE(call)                                                                                   \
  do {                                                                                                 \
    const int status_ = (call);                                                                        \
    if (status_ != 0) {                                                                                \
      failed(out, "%s: %s", #call, device->error_text(status_));                                       \
      goto done;                                                                                       \
    }                                                                                                  \
  } while (0)

void check_ordering_run(const check_device *device, check_wait_mode mode, unsigned *buf, size_t n, int iterations,
                        void *producer, void *consumer, check_ordering_result *out) {
  memset(out, 0, sizeof *out);
  if (iterations > CHECK_ORDERING_MAX_ITERATIONS) iterations = CHECK_ORDERING_MAX_ITERATIONS;
  out->iterations = iterations;
  unsigned long long *mismatches = NULL, counts[CHECK_ORDERING_MAX_ITERATIONS];
  dlmap_exported exported[64];
  dlmap_imported copy;
  void *read_done = NULL;
  memset(exported, 0, sizeof exported);
  memset(&copy, 0, sizeof copy);
  DEVICE(device->alloc((void **)&mismatches, sizeof counts));
  DEVICE(device->zero(mismatches, sizeof counts));
  const int64_t shape[1] = {(int64_t)n};
  dlmap_array arrays[64];
  for (int i = 0; i < 64; i++) {
    arrays[i] = dlmap_array_default();
    arrays[i].data = buf;
    arrays[i].device_type = device->device_type;
    arrays[i].dtype.code = kDLUInt;
    arrays[i].dtype.bits = 32;
    arrays[i].dtype.lanes = 1;
    arrays[i].ndim = 1;
    arrays[i].shape = shape;
    arrays[i].producer_stream = producer;
  }
  void *reader = mode == CHECK_WAIT_LEGACY ? device->legacy_stream : consumer;
  /* The reader's progress: the producer's next fill waits for the previous read, so only a missing wait of the
   * consumer for the producer can make a reader see a value other than its iteration's (without it, a fast GPU runs
   * the next fill while the reader still reads, and the check reports races dlmap did not cause). */
  DEVICE(device->event_create(&read_done));
  /* Zeroed: dlmap_export writes its out only on success, and the cleanup releases whatever is set. */
  memset(exported, 0, sizeof exported);
  for (int it = 0; it < iterations; it++) {
    const unsigned value = 0x1000u + (unsigned)it;
    if (it > 0) DEVICE(device->stream_wait_event(producer, read_done));
    DEVICE(device->slow_fill(buf, n, value, producer));
    dlmap_export_request request = dlmap_export_request_default();
    request.has_stream = mode != CHECK_WAIT_LEGACY; /* None: the legacy default stream */
    request.stream = mode == CHECK_WAIT_NONE ? -1 : (int64_t)(intptr_t)consumer;
    request.defer_stream_sync = mode == CHECK_WAIT_BATCH;
    dlmap_error err;
    const int exports = mode == CHECK_WAIT_BATCH ? 64 : 1;
    for (int e = 0; e < exports; e++) {
      if (dlmap_export(&arrays[e], &request, &exported[e], &err) != DLMAP_OK) failed(out, "export: %s", err.message);
    }
    if (mode == CHECK_WAIT_BATCH) {
      size_t waits = 0;
      if (dlmap_stream_wait_batch(arrays, 64, true, (int64_t)(intptr_t)consumer, &waits, &err) != DLMAP_OK) {
        failed(out, "dlmap_stream_wait_batch: %s", err.message);
      } else if (waits != 1) {
        failed(out, "batch of 64 exports: %zu waits, want 1", waits);
      }
    }
    const unsigned *read = buf;
    if (mode == CHECK_WAIT_IMPORT_COPY && exported[0].legacy != NULL) {
      dlmap_import_request want = dlmap_import_request_default();
      want.copy = DLMAP_COPY_ALWAYS;
      want.consumer_stream = consumer;
      if (dlmap_import_legacy(exported[0].legacy, &want, &copy, &err) != DLMAP_OK) {
        failed(out, "import copy: %s", err.message);
      } else {
        read = (const unsigned *)copy.tensor.data;
      }
      memset(&exported[0], 0, sizeof exported[0]); /* the import owns it now, even on error */
    }
    DEVICE(device->count_mismatches(read, n, value, mismatches + it, reader));
    DEVICE(device->event_record(read_done, reader));
    if (mode == CHECK_WAIT_IMPORT_COPY) {
      DEVICE(device->stream_synchronize(reader));
      dlmap_imported_release(&copy);
    }
    for (int e = 0; e < 64; e++) release(&exported[e]);
  }
  DEVICE(device->device_synchronize());
  DEVICE(device->to_host(counts, mismatches, sizeof counts));
  for (int it = 0; it < iterations; it++) out->raced += counts[it] != 0;
done:
  /* After a device error too: nothing may still use what is released. */
  device->device_synchronize();
  dlmap_imported_release(&copy);
  for (int e = 0; e < 64; e++) release(&exported[e]);
  if (read_done != NULL) device->event_destroy(read_done);
  if (mismatches != NULL) device->release(mismatches);
}
