// Errors found after a call returned: by an NPU kernel's in-kernel checks (recorded in device
// memory, read back at the next synchronisation) or by checks that run in a framework's queued
// task (MindSpore PyNative). One process-wide slot holds the first such error until it is
// taken; it is raised, as the op's usual exception, by the next check point: a call of
// ascend_ops.common.check_errors(), or the next op call of a front door that checks.
//
// Pollers are how a device path feeds the slot: check_errors() asks every registered poller to
// look (and, if asked to, to synchronise its streams first) before it takes the slot.
#pragma once
#include "ascend_ops/error.h"
#include "ascend_ops/export.h"

typedef void (*aop_async_error_poller)(int synchronize, void* ctx);

AOP_EXTERN_C_BEGIN
// Records (status, message) unless an error is already pending; returns 1 if recorded.
AOP_API int aop_async_error_post(aop_status status, const char* message) AOP_NOEXCEPT;
// Moves the pending error into *out and clears the slot; returns its status (AOP_OK: none).
AOP_API aop_status aop_async_error_take(aop_error* out) AOP_NOEXCEPT;
// 1 if an error is pending (a cheap check for the start of every call).
AOP_API int aop_async_error_pending(void) AOP_NOEXCEPT;
// Registers a poller (idempotent for the same fn and ctx); check() runs every poller in
// registration order, then takes the slot.
AOP_API void aop_async_error_add_poller(aop_async_error_poller fn, void* ctx) AOP_NOEXCEPT;
AOP_API aop_status aop_async_error_check(int synchronize, aop_error* out) AOP_NOEXCEPT;
AOP_EXTERN_C_END
