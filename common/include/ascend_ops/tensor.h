// A framework-neutral view of a tensor: pointer, shape, strides (in elements), dtype, device.
// Adapters fill it from torch / MindSpore / NumPy; host code reads only this.
#pragma once
#include <stdint.h>
#include "ascend_ops/dtype.h"

#define AOP_MAX_DIMS 8

typedef enum aop_device_type {
  AOP_DEVICE_CPU = 0,
  AOP_DEVICE_NPU = 1,
  AOP_DEVICE_META = 2,  // shapes only, no data (torch Meta / fake tensors)
} aop_device_type;

typedef struct aop_device {
  aop_device_type type;
  int32_t index;  // device ordinal; 0 on CPU
} aop_device;

typedef struct aop_tensor {
  void* data;
  int32_t ndim;
  int64_t shape[AOP_MAX_DIMS];
  int64_t strides[AOP_MAX_DIMS];  // in elements, like torch
  aop_dtype dtype;
  aop_device device;
} aop_tensor;
