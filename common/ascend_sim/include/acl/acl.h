/* The subset of the ACL runtime API (acl/acl.h of CANN) that ascend-ops' NPU host code calls,
 * declared for the simulated Ascend runtime (libascend_sim, common/ascend_sim). Names, types,
 * values and signatures are those of the real API; the declarations are our own. Code built
 * against this header must also compile against CANN's (tests/test_npu_launch_compile.py):
 * add a declaration here only with the real one's exact signature. */
#ifndef AOP_ASCEND_SIM_ACL_ACL_H_
#define AOP_ASCEND_SIM_ACL_ACL_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ACL_FUNC_VISIBILITY __attribute__((visibility("default")))

typedef int aclError;
typedef void *aclrtStream;
typedef void *aclrtEvent;
typedef void *aclmdlRI;

static const int ACL_SUCCESS = 0;
static const int ACL_ERROR_INVALID_PARAM = 100000;
static const int ACL_ERROR_BAD_ALLOC = 200000;
static const int ACL_ERROR_INVALID_RESOURCE_HANDLE = 200005;
static const int ACL_ERROR_RT_FAILURE = 500003;

#define ACL_ERROR_RT_PARAM_INVALID 107000
#define ACL_ERROR_RT_STREAM_CAPTURED 107027
#define ACL_ERROR_RT_STREAM_NOT_CAPTURED 107029
#define ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT 107030
#define ACL_ERROR_RT_MEMORY_ALLOCATION 207001
#define ACL_ERROR_RT_AICORE_EXCEPTION 507015

typedef enum aclrtMemcpyKind {
  ACL_MEMCPY_HOST_TO_HOST,
  ACL_MEMCPY_HOST_TO_DEVICE,
  ACL_MEMCPY_DEVICE_TO_HOST,
  ACL_MEMCPY_DEVICE_TO_DEVICE,
  ACL_MEMCPY_DEFAULT,
} aclrtMemcpyKind;

typedef enum aclrtMemMallocPolicy {
  ACL_MEM_MALLOC_HUGE_FIRST,
  ACL_MEM_MALLOC_HUGE_ONLY,
  ACL_MEM_MALLOC_NORMAL_ONLY,
} aclrtMemMallocPolicy;

typedef enum {
  ACL_HOST_REGISTER_MAPPED = 0,
} aclrtHostRegisterType;

typedef enum {
  ACL_MODEL_RI_CAPTURE_MODE_GLOBAL = 0,
  ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL,
  ACL_MODEL_RI_CAPTURE_MODE_RELAXED,
} aclmdlRICaptureMode;

typedef enum {
  ACL_MODEL_RI_CAPTURE_STATUS_NONE = 0,
  ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE,
  ACL_MODEL_RI_CAPTURE_STATUS_INVALIDATED,
} aclmdlRICaptureStatus;

/* devices */
ACL_FUNC_VISIBILITY aclError aclrtSetDevice(int32_t deviceId);
ACL_FUNC_VISIBILITY aclError aclrtGetDevice(int32_t *deviceId);
ACL_FUNC_VISIBILITY aclError aclrtSynchronizeDevice(void);

/* memory */
ACL_FUNC_VISIBILITY aclError aclrtMalloc(void **devPtr, size_t size, aclrtMemMallocPolicy policy);
ACL_FUNC_VISIBILITY aclError aclrtFree(void *devPtr);
ACL_FUNC_VISIBILITY aclError aclrtMallocHost(void **hostPtr, size_t size);
ACL_FUNC_VISIBILITY aclError aclrtFreeHost(void *hostPtr);
ACL_FUNC_VISIBILITY aclError aclrtHostRegister(void *ptr, uint64_t size, aclrtHostRegisterType type, void **devPtr);
ACL_FUNC_VISIBILITY aclError aclrtHostUnregister(void *ptr);
ACL_FUNC_VISIBILITY aclError aclrtMemcpy(void *dst, size_t destMax, const void *src, size_t count,
                                         aclrtMemcpyKind kind);
ACL_FUNC_VISIBILITY aclError aclrtMemcpyAsync(void *dst, size_t destMax, const void *src, size_t count,
                                              aclrtMemcpyKind kind, aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclrtMemsetAsync(void *devPtr, size_t maxCount, int32_t value, size_t count,
                                              aclrtStream stream);

/* streams and events */
ACL_FUNC_VISIBILITY aclError aclrtCreateStream(aclrtStream *stream);
ACL_FUNC_VISIBILITY aclError aclrtDestroyStream(aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclrtSynchronizeStream(aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclrtCreateEvent(aclrtEvent *event);
ACL_FUNC_VISIBILITY aclError aclrtDestroyEvent(aclrtEvent event);
ACL_FUNC_VISIBILITY aclError aclrtRecordEvent(aclrtEvent event, aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclrtStreamWaitEvent(aclrtStream stream, aclrtEvent event);
ACL_FUNC_VISIBILITY aclError aclrtSynchronizeEvent(aclrtEvent event);

/* stream capture into a model runtime instance (graph), and its replay */
ACL_FUNC_VISIBILITY aclError aclmdlRICaptureBegin(aclrtStream stream, aclmdlRICaptureMode mode);
ACL_FUNC_VISIBILITY aclError aclmdlRICaptureGetInfo(aclrtStream stream, aclmdlRICaptureStatus *status,
                                                    aclmdlRI *modelRI);
ACL_FUNC_VISIBILITY aclError aclmdlRICaptureEnd(aclrtStream stream, aclmdlRI *modelRI);
ACL_FUNC_VISIBILITY aclError aclmdlRIExecuteAsync(aclmdlRI modelRI, aclrtStream stream);
ACL_FUNC_VISIBILITY aclError aclmdlRIDestroy(aclmdlRI modelRI);

#ifdef __cplusplus
}
#endif

#endif /* AOP_ASCEND_SIM_ACL_ACL_H_ */
