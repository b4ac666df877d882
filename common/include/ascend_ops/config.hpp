// The namespace of the header-only C++ wrappers.
//
// The wrappers are compiled inside each calling module with that module's C++ ABI
// (_GLIBCXX_USE_CXX11_ABI=1 for PyTorch, =0 for MindSpore). Their classes hold std::string
// and friends, so an ABI-0 and an ABI-1 copy of, say, aop::KeyBuilder have different layouts
// under the same name. The inline namespace below gives the two copies different mangled
// names, so they can never be merged by the dynamic linker when both modules live in one
// process. Users write aop::KeyBuilder either way.
#pragma once
#include <cstddef>  // defines _GLIBCXX_USE_CXX11_ABI under libstdc++

#if defined(_GLIBCXX_USE_CXX11_ABI) && _GLIBCXX_USE_CXX11_ABI == 0
#define AOP_CXX_ABI_TAG cxx_abi0
#define AOP_CXX_ABI_VALUE 0
#else
#define AOP_CXX_ABI_TAG cxx_abi1
#define AOP_CXX_ABI_VALUE 1
#endif

#define AOP_NAMESPACE_BEGIN \
  namespace aop {           \
  inline namespace AOP_CXX_ABI_TAG {
#define AOP_NAMESPACE_END \
  }                       \
  }
