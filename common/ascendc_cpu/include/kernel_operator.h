// kernel_operator.h for the CPU: the subset of the AscendC kernel API our kernels use, run by
// the ascendc_cpu emulator (see ascendc_cpu/launch.h). Kernel sources include this header by
// the same name as with CANN; only the include path differs.
#pragma once
#include "ascendc_cpu/types.h"

#include "ascendc_cpu/global_tensor.h"
#include "ascendc_cpu/local_tensor.h"
#include "ascendc_cpu/tpipe.h"
#include "ascendc_cpu/data_copy.h"
#include "ascendc_cpu/sync.h"
#include "ascendc_cpu/vec_binary.h"
#include "ascendc_cpu/vec_unary.h"
#include "ascendc_cpu/vec_scalar.h"
#include "ascendc_cpu/vec_ternary_scalar.h"
#include "ascendc_cpu/cast.h"
#include "ascendc_cpu/reduce.h"
#include "ascendc_cpu/compare_select.h"
#include "ascendc_cpu/sort.h"
#include "ascendc_cpu/topk.h"
#include "ascendc_cpu/matmul.h"
