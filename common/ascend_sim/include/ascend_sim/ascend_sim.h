/* libascend_sim: the simulated Ascend runtime's own interface, beside the ACL subset of
 * acl/acl.h. For tests and the dev build only (AOP_WITH_NPU_SIM); never in a release package.
 *
 * - Counters: what the runtime was asked to do, process-wide (a test takes a snapshot before
 *   and after an op call). A synchronisation, an allocation or a pageable copy made while a
 *   stream captures fails and is counted as a violation.
 * - Kernel launches: an op's <op>_launch (the <<<>>> wrapper the CANN build generates) is, in
 *   the simulated build, a task put on the stream that runs the AscendC kernel on common's
 *   emulator (ascend_sim_launch).
 * - Device memory is host memory owned by the runtime: aclrtFree poisons it (0xDB bytes) and
 *   keeps it out of reuse; ascend_sim_region tells the allocation a pointer lies in, so a
 *   launch gives the emulator the bounds of every GM argument. */
#ifndef AOP_ASCEND_SIM_H_
#define AOP_ASCEND_SIM_H_

#include <stddef.h>
#include <stdint.h>

#include "acl/acl.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ascend_sim_counters {
  uint64_t synchronizations; /* aclrtSynchronizeStream / Device / Event */
  uint64_t h2d_copies;       /* aclrtMemcpy(Async) host -> device */
  uint64_t d2h_copies;       /* device -> host */
  uint64_t d2d_copies;       /* device -> device */
  uint64_t allocations;      /* aclrtMalloc, aclrtMallocHost, aclrtHostRegister */
  uint64_t frees;            /* aclrtFree, aclrtFreeHost, aclrtHostUnregister */
  uint64_t launches;         /* kernel launches executed (a replayed graph counts its kernels) */
  uint64_t memsets;          /* aclrtMemsetAsync */
  uint64_t pageable_refused; /* async copies refused: host side not pinned (aclrtMallocHost) */
  uint64_t capture_violations; /* sync / allocation / pageable copy while a stream captures */
} ascend_sim_counters;

#define ASCEND_SIM_POISON 0xDB

ACL_FUNC_VISIBILITY void ascend_sim_get_counters(ascend_sim_counters *out);
ACL_FUNC_VISIBILITY void ascend_sim_reset_counters(void);

/* The allocation (device, or host memory mapped for the device) holding `ptr`: 1 and its
 * base and size, or 0 if `ptr` is in none. Freed memory is in none. */
ACL_FUNC_VISIBILITY int ascend_sim_region(const void *ptr, void **base, size_t *size);

/* A task on `stream`: run(ctx) in stream order (returns 0, or nonzero and a message in
 * error[error_size] for a device fault: the stream then fails its next synchronisation with
 * ACL_ERROR_RT_AICORE_EXCEPTION). release(ctx) when the task (or the graph that captured it)
 * is gone. Counted as a launch each time it runs. */
typedef int (*ascend_sim_task_fn)(void *ctx, char *error, size_t error_size);
ACL_FUNC_VISIBILITY aclError ascend_sim_launch(aclrtStream stream, const char *name, ascend_sim_task_fn run,
                                               void *ctx, void (*release)(void *ctx));

/* The message of the last device fault a synchronisation reported ("" if none). */
ACL_FUNC_VISIBILITY const char *ascend_sim_last_fault(void);

/* Whether `stream` (NULL: any stream) is capturing now. */
ACL_FUNC_VISIBILITY int ascend_sim_capturing(aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* AOP_ASCEND_SIM_H_ */
