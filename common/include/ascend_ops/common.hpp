// Everything of the common runtime for C++ callers: the C interface and its wrappers.
#pragma once
#include "ascend_ops/async_error.hpp"
#include "ascend_ops/cache.hpp"
#include "ascend_ops/config.hpp"
#include "ascend_ops/dtype.hpp"
#include "ascend_ops/error.hpp"
#include "ascend_ops/hash.hpp"
#include "ascend_ops/parallel.hpp"
#include "ascend_ops/platform.hpp"
#include "ascend_ops/tensor.hpp"
#include "ascend_ops/version.hpp"
#include "ascend_ops/workspace.hpp"
