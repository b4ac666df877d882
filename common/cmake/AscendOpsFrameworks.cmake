# Finds what an op can be built for: Python, pybind11, torch (CPU), torch_npu headers,
# MindSpore and CANN. Each is asked through the Python that runs the build; torch_npu is
# never imported (its entry point breaks `import torch` without CANN).
include_guard(GLOBAL)

include(${CMAKE_CURRENT_LIST_DIR}/AscendOpsPython.cmake)  # Python, pybind11, _aop_python()

# --- torch -------------------------------------------------------------------------------
if(NOT DEFINED AOP_TORCH_ROOT)
  _aop_python(_t "import importlib.util as u, os\nif u.find_spec('torch'):\n  import torch\n  print(os.path.dirname(torch.__file__)); print(torch.__version__.split('+')[0]); print(int(torch._C._GLIBCXX_USE_CXX11_ABI))")
  if(_t)
    list(GET _t 0 _root)
    list(GET _t 1 _ver)
    list(GET _t 2 _abi)
    set(AOP_TORCH_ROOT "${_root}" CACHE PATH "torch package directory")
    set(AOP_TORCH_VERSION "${_ver}" CACHE STRING "torch version")
    set(AOP_TORCH_CXX11_ABI "${_abi}" CACHE STRING "torch _GLIBCXX_USE_CXX11_ABI")
  else()
    set(AOP_TORCH_ROOT "" CACHE PATH "torch package directory")
  endif()
endif()
if(AOP_TORCH_ROOT AND NOT TARGET aop::torch)
  add_library(aop::torch INTERFACE IMPORTED GLOBAL)
  target_include_directories(aop::torch SYSTEM INTERFACE
    ${AOP_TORCH_ROOT}/include ${AOP_TORCH_ROOT}/include/torch/csrc/api/include)
  target_compile_definitions(aop::torch INTERFACE _GLIBCXX_USE_CXX11_ABI=${AOP_TORCH_CXX11_ABI})
  # torch >= 2.10 headers are C++20 (TorchConfig.cmake sets CXX_STANDARD 20; with -std=c++17
  # g++ only warns today, but the headers are not written for it).
  target_compile_features(aop::torch INTERFACE cxx_std_20)
  target_link_libraries(aop::torch INTERFACE
    ${AOP_TORCH_ROOT}/lib/libtorch.so ${AOP_TORCH_ROOT}/lib/libtorch_cpu.so
    ${AOP_TORCH_ROOT}/lib/libc10.so)
endif()

# --- torch_npu: headers only, from an unzipped wheel or an installed package -----------------
if(NOT DEFINED AOP_TORCH_NPU_ROOT)
  _aop_python(_tn "import importlib.util as u, os\ns = u.find_spec('torch_npu')\nprint(os.path.dirname(s.origin) if s and s.origin else '')")
  set(AOP_TORCH_NPU_ROOT "${_tn}" CACHE PATH "torch_npu package directory (headers in include/)")
endif()

# --- MindSpore -----------------------------------------------------------------------------
if(NOT DEFINED AOP_MINDSPORE_ROOT)
  _aop_python(_ms "import importlib.util as u, os\ns = u.find_spec('mindspore')\nprint(os.path.dirname(s.origin) if s else '')\nimport importlib.metadata as m\nprint(m.version('mindspore') if s else '')")
  if(_ms)
    list(GET _ms 0 _root)
    list(GET _ms 1 _ver)
    set(AOP_MINDSPORE_ROOT "${_root}" CACHE PATH "mindspore package directory")
    set(AOP_MINDSPORE_VERSION "${_ver}" CACHE STRING "mindspore version")
  else()
    set(AOP_MINDSPORE_ROOT "" CACHE PATH "mindspore package directory")
  endif()
endif()
if(AOP_MINDSPORE_ROOT AND NOT TARGET aop::mindspore)
  set(_msi ${AOP_MINDSPORE_ROOT}/include)
  set(_inner ${_msi}/mindspore)
  add_library(aop::mindspore INTERFACE IMPORTED GLOBAL)
  # MindSpore's own pybind11 (2.13, in include/third_party/pybind11/*.h, so found as
  # "pybind11/pybind11.h" from include/third_party) comes first: ms_extension is built against it,
  # never against pip's pybind11. The list is CustomOpBuilder.get_include_paths() of 2.10, minus
  # the entries the wheel does not ship (CMake rejects missing directories on imported targets).
  # `third_party/pybind11` itself must not be on the path: its common.h, options.h, ... would
  # shadow same-named headers.
  set(_ms_dirs ${_msi}/third_party ${_msi}/third_party/include
    ${AOP_MINDSPORE_ROOT} ${_msi} ${_msi}/third_party/robin_hood_hashing
    ${_msi}/third_party/securec/include
    ${_inner}/include ${_inner}/core/include ${_inner}/core/mindrt/include ${_inner}/core/mindrt
    ${_inner}/ops ${_inner}/ops/include ${_inner}/ops/kernel/include ${_inner}/ccsrc
    ${_inner}/ccsrc/include)
  set(_ms_existing "")
  foreach(_d IN LISTS _ms_dirs)
    if(IS_DIRECTORY "${_d}")
      list(APPEND _ms_existing "${_d}")
    endif()
  endforeach()
  target_include_directories(aop::mindspore SYSTEM BEFORE INTERFACE ${_ms_existing})
  target_compile_definitions(aop::mindspore INTERFACE
    _GLIBCXX_USE_CXX11_ABI=0 ENABLE_FAST_HASH_TABLE=1)
  set(_msl ${AOP_MINDSPORE_ROOT}/lib)
  # CustomOpBuilder's four, plus the two whose symbols an adapter calls directly when it queues
  # its own PyBoostDeviceTask and waits for the pipeline (pynative_utils: the task's vtable;
  # runtime_pipeline: Pipeline::WaitForward). The loader finds them through RUNPATH
  # $ORIGIN/../../mindspore/lib once installed, and `import mindspore` has loaded them anyway.
  target_link_libraries(aop::mindspore INTERFACE
    ${_msl}/libmindspore_core.so ${_msl}/libmindspore_ms_backend.so
    ${_msl}/libmindspore_pynative.so ${_msl}/libmindspore_pyboost.so
    ${_msl}/libmindspore_pynative_utils.so ${_msl}/libmindspore_runtime_pipeline.so)
endif()

# --- CANN ------------------------------------------------------------------------------------
if(NOT DEFINED AOP_CANN_ROOT)
  set(_cann "")
  foreach(_v ASCEND_HOME_PATH ASCEND_TOOLKIT_HOME)
    if(NOT _cann AND DEFINED ENV{${_v}} AND EXISTS "$ENV{${_v}}")
      set(_cann "$ENV{${_v}}")
    endif()
  endforeach()
  if(NOT _cann AND EXISTS /usr/local/Ascend/ascend-toolkit/latest)
    set(_cann /usr/local/Ascend/ascend-toolkit/latest)
  endif()
  set(AOP_CANN_ROOT "${_cann}" CACHE PATH "CANN toolkit root")
endif()

# Resolves the AUTO/ON/OFF value of option <name> into <out> TRUE/FALSE given whether its
# dependency was found; ON without the dependency stops the configure with a clear message.
function(aop_resolve_option out name found what)
  set(_value "${${name}}")
  if(_value STREQUAL "OFF")
    set(${out} FALSE PARENT_SCOPE)
  elseif(found)
    set(${out} TRUE PARENT_SCOPE)
  elseif(_value STREQUAL "ON")
    message(FATAL_ERROR "${name}=ON but ${what} was not found")
  else()
    set(${out} FALSE PARENT_SCOPE)
  endif()
endfunction()
