# ascend_ops_add_op(): the one build every op uses, so each op's CMakeLists.txt is a single call.
#
#   ascend_ops_add_op(<op>
#     VERSION <x.y.z>       default: python/ascend_ops/<op>/_version.py's __version__, else the
#                           package's version (scikit-build-core's SKBUILD_PROJECT_VERSION)
#     DESCRIPTION <file>    the op's description, relative to the package root; default op.h.
#                           Given: HOST and KERNEL are only the files listed (no globs)
#     PACKAGE <name>        the distribution the op ships in; default the package being built
#                           (SKBUILD_PROJECT_NAME), else ascend-op-<op with dashes>
#     HOST <files>          framework-neutral C++ (validate, tiling, CPU kernel); built once
#                           per C++ ABI that a module needs; default host/*.cpp
#     KERNEL <files>        AscendC kernels (default kernel/*_kernel.cpp), one __global__ kernel per file, each followed by
#                           its host-side <<<>>> wrapper under #ifndef ASCENDC_CPU_DEBUG (CANN's
#                           ascendc_library generates the launch stub from the translation
#                           unit that holds the kernel, so the wrapper cannot live apart):
#                           built with g++ against the emulator (ASCENDC_CPU_DEBUG defined,
#                           wrapper left out) and with CANN's ascendc_library where CANN is found
#     NPU_HOST <files>      host code that calls the NPU launch (aclrt streams); by default
#                           run_npu generated from npu_launch.cpp.in: common's run_kernel over
#                           the op's launch description, op.h (ascend_ops/kernel_launch.hpp)
#     CORE <files>          pybind11 module `_core`: cpu and emu backends on NumPy arrays;
#                           generated for an op with an op.h (core_module.cpp.in, common's
#                           numpy_op.hpp), CORE then adds sources of its own
#     TORCH <files>         module `_torch`: TORCH_LIBRARY_FRAGMENT(ascend_ops, m) and impls; an
#                           op with an op.h gets its schema and CPU / Meta / ADInplaceOrView
#                           kernels generated (torch_module.cpp.in, common's torch_op.hpp)
#     TORCH_NPU <files>     PrivateUse1 impls, only with torch_npu headers and CANN (generated
#                           for an op with an op.h: torch_npu_module.cpp.in)
#     MINDSPORE <files>     module `_ms`: PyNative (ms_extension) and Graph-mode (aot) entries
#   )
#
# Options, each AUTO (build where the dependency is found), ON (required) or OFF:
#   AOP_WITH_EMU, AOP_WITH_TORCH, AOP_WITH_TORCH_NPU, AOP_WITH_MINDSPORE, AOP_WITH_NPU,
#   AOP_WITH_NPU_SIM (the NPU host code in _core on common's simulated Ascend runtime, kernels
#   on the emulator: where common was built with it (./dev, CI) and CANN is not found).
# Everything is installed into ascend_ops/<op>/ next to a generated _build_info.py that says
# which backends and frameworks were built, for `ascend-ops list` and the loader.
#
# One package may ship several ops (lightning_indexer and lightning_indexer_quant share host and
# kernel code): one call per op in its CMakeLists.txt, each with its own description (DESCRIPTION),
# explicit HOST / KERNEL lists and python/ascend_ops/<op>/. Targets are named <op>_core,
# <op>_torch, <op>_ms (modules _core, _torch, _ms) and generated files go to <binary dir>/<op>/.
include_guard(GLOBAL)
include(${CMAKE_CURRENT_LIST_DIR}/AscendOpsFrameworks.cmake)

foreach(_opt AOP_WITH_EMU AOP_WITH_TORCH AOP_WITH_TORCH_NPU AOP_WITH_MINDSPORE AOP_WITH_NPU AOP_WITH_NPU_SIM)
  set(${_opt} AUTO CACHE STRING "AUTO, ON or OFF")
  set_property(CACHE ${_opt} PROPERTY STRINGS AUTO ON OFF)
endforeach()
set(AOP_SOC_VERSION "Ascend910B2" CACHE STRING "SoC the CANN kernel build targets")
set(_AOP_CMAKE_DIR ${CMAKE_CURRENT_LIST_DIR})

# Host sources compiled for one C++ ABI (0 for MindSpore, 1 for PyTorch and NumPy modules).
function(_aop_host_library out op abi)
  set(_target ${op}_host_abi${abi})
  if(NOT TARGET ${_target})
    add_library(${_target} STATIC ${ARGN})
    set_target_properties(${_target} PROPERTIES POSITION_INDEPENDENT_CODE ON
      CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON)
    target_compile_features(${_target} PUBLIC cxx_std_17)
    target_compile_definitions(${_target} PUBLIC _GLIBCXX_USE_CXX11_ABI=${abi})
    target_compile_options(${_target} PRIVATE -Wall -Wextra)
    target_include_directories(${_target} PUBLIC ${CMAKE_CURRENT_SOURCE_DIR})
    target_link_libraries(${_target} PUBLIC AscendOpsCommon::common Threads::Threads)
  endif()
  set(${out} ${_target} PARENT_SCOPE)
endfunction()

function(_aop_module_common target op)
  set_target_properties(${target} PROPERTIES
    LIBRARY_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/${op}  # several ops' _core in one build
    CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON
    BUILD_RPATH_USE_ORIGIN ON
    INSTALL_RPATH "$ORIGIN/../common/lib;$ORIGIN/../../torch/lib;$ORIGIN/../../mindspore/lib")
  target_compile_options(${target} PRIVATE -Wall -Wextra)
  target_compile_definitions(${target} PRIVATE AOP_OP_NAME="${op}" AOP_OP_VERSION="${_AOP_OP_VERSION}")
  install(TARGETS ${target} LIBRARY DESTINATION ascend_ops/${op})
endfunction()

function(ascend_ops_add_op op)
  cmake_parse_arguments(PARSE_ARGV 1 A ""
    "VERSION;DESCRIPTION;PACKAGE" "HOST;KERNEL;KERNEL_LAUNCH;NPU_HOST;CORE;TORCH;TORCH_NPU;MINDSPORE;MINDSPORE_ASCEND")
  # Defaults: the version of python/ascend_ops/<op>/_version.py (the one version source), the
  # host sources host/*.cpp, the kernels kernel/*_kernel.cpp.
  set(_version_py ${CMAKE_CURRENT_SOURCE_DIR}/python/ascend_ops/${op}/_version.py)
  if(NOT A_VERSION AND EXISTS ${_version_py})
    file(STRINGS ${_version_py} _version REGEX "__version__")
    string(REGEX MATCH "[0-9]+\\.[0-9]+\\.[0-9]+" A_VERSION "${_version}")
  endif()
  if(NOT A_VERSION AND SKBUILD_PROJECT_VERSION)
    string(REGEX MATCH "[0-9]+\\.[0-9]+\\.[0-9]+" A_VERSION "${SKBUILD_PROJECT_VERSION}")
  endif()
  if(NOT A_PACKAGE)
    if(SKBUILD_PROJECT_NAME)  # normalised with underscores: the distribution's name has dashes
      string(REPLACE "_" "-" A_PACKAGE "${SKBUILD_PROJECT_NAME}")
    else()
      string(REPLACE "_" "-" A_PACKAGE "ascend-op-${op}")
    endif()
  endif()
  # This op's generated sources and files (one package may build several ops).
  set(_bin ${CMAKE_CURRENT_BINARY_DIR}/${op})
  # The globs serve a package's one op (op.h); an op with its own DESCRIPTION shares the
  # package's directories and gets only the HOST / KERNEL files it lists.
  if(NOT A_HOST AND NOT A_DESCRIPTION)
    file(GLOB A_HOST CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/host/*.cpp)
  endif()
  if(NOT A_KERNEL AND NOT A_DESCRIPTION)
    file(GLOB A_KERNEL CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/kernel/*_kernel.cpp)
  endif()
  if(NOT A_DESCRIPTION)
    set(A_DESCRIPTION op.h)
  endif()
  if(NOT A_VERSION OR NOT A_HOST)
    message(FATAL_ERROR "ascend_ops_add_op(${op}): no version (python/ascend_ops/${op}/_version.py) or no host "
      "sources (host/*.cpp)")
  endif()
  # Still parsed so that an old call fails here instead of compiling its wrapper as a kernel.
  if(A_KERNEL_LAUNCH)
    message(FATAL_ERROR "ascend_ops_add_op(${op}): KERNEL_LAUNCH is gone: put the <<<>>> wrapper "
      "at the end of the kernel source, under #ifndef ASCENDC_CPU_DEBUG (see common/cmake/AscendOpsOp.cmake)")
  endif()
  set(_AOP_OP_VERSION ${A_VERSION})

  # An op described in op.h gets its torch entries generated (torch_module.cpp.in); TORCH adds
  # files of its own.
  set(_described FALSE)
  if(EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/${A_DESCRIPTION})
    set(_described TRUE)
  endif()
  set(_torch_found FALSE)
  if(AOP_TORCH_ROOT AND (A_TORCH OR _described))
    set(_torch_found TRUE)
  endif()
  set(_ms_found FALSE)
  if(AOP_MINDSPORE_ROOT AND (A_MINDSPORE OR _described))
    set(_ms_found TRUE)
  endif()
  set(_cann_found FALSE)
  foreach(_sub compiler/tikcpp/ascendc_kernel_cmake tools/tikcpp/ascendc_kernel_cmake)
    if(NOT _cann_found AND AOP_CANN_ROOT AND EXISTS "${AOP_CANN_ROOT}/${_sub}/ascendc.cmake")
      set(_cann_found TRUE)
      set(_ascendc_cmake "${AOP_CANN_ROOT}/${_sub}/ascendc.cmake")
    endif()
  endforeach()
  set(_tnpu_found FALSE)
  if(_torch_found AND _cann_found AND AOP_TORCH_NPU_ROOT AND EXISTS "${AOP_TORCH_NPU_ROOT}/include")
    set(_tnpu_found TRUE)
  endif()
  # MindSpore on Ascend: the _ms module's NPU path (AOP_MS_ASCEND) and graph kernels need the
  # wheel's Ascend plugin and CANN (run_npu, libascendcl). Why not, for `ascend-ops list`:
  set(_msa_found FALSE)
  set(_msa_why "")
  set(_ms_plugin "${AOP_MINDSPORE_ROOT}/lib/plugin")
  if(NOT _ms_found)
    set(_msa_why "mindspore was not found when the op was built")
  elseif(NOT A_KERNEL)
    set(_msa_why "the op has no AscendC kernel")
  elseif(NOT EXISTS "${_ms_plugin}/libmindspore_ascend.so.2")
    set(_msa_why "the mindspore wheel has no Ascend plugin (lib/plugin/libmindspore_ascend.so.2)")
  elseif(NOT _cann_found)
    set(_msa_why "CANN was not found when the op was built (compile-checked only: tests/test_ms_ascend_compile.py)")
  else()
    set(_msa_found TRUE)
  endif()
  set(_sim_found FALSE)
  if(TARGET AscendOpsCommon::ascend_sim)
    set(_sim_found TRUE)
  endif()
  aop_resolve_option(_emu AOP_WITH_EMU TRUE "the emulator")
  aop_resolve_option(_torch AOP_WITH_TORCH ${_torch_found} "torch (pip install torch)")
  aop_resolve_option(_ms AOP_WITH_MINDSPORE ${_ms_found} "mindspore (pip install mindspore)")
  aop_resolve_option(_npu AOP_WITH_NPU ${_cann_found} "the CANN toolkit (ASCEND_HOME_PATH)")
  aop_resolve_option(_tnpu AOP_WITH_TORCH_NPU ${_tnpu_found} "torch_npu headers and CANN")
  aop_resolve_option(_msa AOP_WITH_MINDSPORE_ASCEND ${_msa_found} "the mindspore Ascend plugin and CANN")
  if(NOT _msa AND _msa_found)
    set(_msa_why "the op was built with AOP_WITH_MINDSPORE_ASCEND=OFF")
  endif()

  # An op without an AscendC kernel (yet) has the cpu backend only: no emu, no npu build.
  if(NOT A_KERNEL)
    set(_emu FALSE)
    set(_npu FALSE)
    set(_tnpu FALSE)
    set(_msa FALSE)
  endif()

  _aop_host_library(_host1 ${op} 1 ${A_HOST})

  # run_npu of an op with a kernel: generated (build/generated/npu_launch.cpp) unless given.
  if(A_KERNEL AND NOT A_NPU_HOST)
    set(AOP_OP ${op})
    set(A_NPU_HOST ${_bin}/generated/npu_launch.cpp)
    configure_file(${_AOP_CMAKE_DIR}/npu_launch.cpp.in ${A_NPU_HOST} @ONLY)
  endif()

  # --- kernel: the NPU build where CANN is, the emulator build always (unless OFF) -------
  if(_npu)
    set(ASCEND_CANN_PACKAGE_PATH ${AOP_CANN_ROOT})
    set(SOC_VERSION ${AOP_SOC_VERSION})
    include(${_ascendc_cmake})  # defines ascendc_library() and ascendc_include_directories()
    # Kernel sources with their <<<>>> wrappers: ascendc_library compiles each for the cube and
    # the vector core, generates the host stubs and the kernel-type section from it, and
    # compiles it once more as host code (--cce-host-only), which builds the wrapper.
    ascendc_library(${op}_kernel_npu STATIC ${A_KERNEL})
    # It sees only its own include list: kernels include "kernel/<op>_tiling.h" from the op root
    # and common's shared device code as "aop_kernel/...".
    ascendc_include_directories(${op}_kernel_npu PRIVATE ${CMAKE_CURRENT_SOURCE_DIR} ${AscendOpsCommon_KERNEL_INCLUDE_DIR})
    add_library(${op}_npu_host STATIC ${A_NPU_HOST})
    set_target_properties(${op}_npu_host PROPERTIES POSITION_INDEPENDENT_CODE ON)
    target_include_directories(${op}_npu_host PRIVATE ${AOP_CANN_ROOT}/include)
    target_link_libraries(${op}_npu_host PUBLIC ${_host1} ${op}_kernel_npu
      ${AOP_CANN_ROOT}/lib64/libascendcl.so)
    target_compile_definitions(${_host1} PUBLIC AOP_WITH_NPU=1)
  endif()
  if(_emu)
    add_library(${op}_kernel_emu STATIC ${A_KERNEL})
    set_target_properties(${op}_kernel_emu PROPERTIES POSITION_INDEPENDENT_CODE ON
      CXX_VISIBILITY_PRESET hidden)
    target_compile_options(${op}_kernel_emu PRIVATE -Wall -Wextra)
    # A CPU build, as in CANN's CPU-debug mode: leaves out the <<<>>> wrappers (CANN only).
    target_compile_definitions(${op}_kernel_emu PRIVATE ASCENDC_CPU_DEBUG=1)
    target_include_directories(${op}_kernel_emu PUBLIC ${CMAKE_CURRENT_SOURCE_DIR} ${AscendOpsCommon_KERNEL_INCLUDE_DIR})
    target_link_libraries(${op}_kernel_emu PUBLIC AscendOpsCommon::ascendc_cpu)
  endif()

  # --- _core: NumPy front door for the cpu and emu backends --------------------------------
  if(_described)
    set(AOP_OP ${op})
    set(_core_gen ${_bin}/generated/core_module.cpp)
    configure_file(${_AOP_CMAKE_DIR}/core_module.cpp.in ${_core_gen} @ONLY)
    list(APPEND A_CORE ${_core_gen})
  endif()
  if(NOT A_CORE)
    message(FATAL_ERROR "ascend_ops_add_op(${op}): describe the op in op.h or give CORE sources")
  endif()
  pybind11_add_module(${op}_core MODULE ${A_CORE})
  set_target_properties(${op}_core PROPERTIES OUTPUT_NAME _core)
  _aop_module_common(${op}_core ${op})
  target_link_libraries(${op}_core PRIVATE ${_host1})
  if(_emu)
    target_link_libraries(${op}_core PRIVATE ${op}_kernel_emu)
    target_compile_definitions(${op}_core PRIVATE AOP_WITH_EMU=1)
  endif()
  if(_npu)
    target_link_libraries(${op}_core PRIVATE ${op}_npu_host)
  endif()
  # The simulated NPU path: NPU_HOST compiled against the simulated runtime's acl/acl.h, the
  # op's <op>_launch a task that runs the kernel on the emulator (CORE's host/sim_launch.cpp).
  aop_resolve_option(_sim AOP_WITH_NPU_SIM "${_sim_found}" "common built with AOP_WITH_NPU_SIM=ON")
  if(_sim AND _emu AND A_NPU_HOST AND NOT _npu)
    target_sources(${op}_core PRIVATE ${A_NPU_HOST})
    target_link_libraries(${op}_core PRIVATE AscendOpsCommon::ascend_sim)
    target_compile_definitions(${op}_core PRIVATE AOP_WITH_NPU_SIM=1)
  else()
    set(_sim FALSE)
  endif()

  # --- _torch: the PyTorch library fragment ------------------------------------------------
  if(_torch)
    set(_init ${_bin}/_torch_module_init.cpp)
    set(AOP_MODULE_NAME _torch)
    configure_file(${_AOP_CMAKE_DIR}/module_init.cpp.in ${_init} @ONLY)
    if(_described)
      set(AOP_OP ${op})
      set(_torch_gen ${_bin}/generated/torch_module.cpp)
      configure_file(${_AOP_CMAKE_DIR}/torch_module.cpp.in ${_torch_gen} @ONLY)
      list(APPEND A_TORCH ${_torch_gen})
      set(_torch_npu_gen ${_bin}/generated/torch_npu_module.cpp)
      configure_file(${_AOP_CMAKE_DIR}/torch_npu_module.cpp.in ${_torch_npu_gen} @ONLY)
      list(APPEND A_TORCH_NPU ${_torch_npu_gen})
    endif()
    add_library(${op}_torch MODULE ${A_TORCH} ${_init})
    set_target_properties(${op}_torch PROPERTIES OUTPUT_NAME _torch PREFIX "" SUFFIX ".${Python_SOABI}${CMAKE_SHARED_MODULE_SUFFIX}")
    _aop_module_common(${op}_torch ${op})
    _aop_host_library(_host_t ${op} ${AOP_TORCH_CXX11_ABI} ${A_HOST})
    target_link_libraries(${op}_torch PRIVATE ${_host_t} aop::torch Python::Module)
    # torch's CPU wheels parallelise with OpenMP: at::parallel_for (which the adapters hand the
    # CPU kernels' work to) is inline code that runs serially unless compiled with -fopenmp.
    # libgomp.so.1 then resolves to the copy torch has already loaded: one OpenMP team.
    target_compile_options(${op}_torch PRIVATE -fopenmp)
    target_link_options(${op}_torch PRIVATE -fopenmp)
    if(_tnpu)
      target_sources(${op}_torch PRIVATE ${A_TORCH_NPU})
      target_include_directories(${op}_torch SYSTEM PRIVATE ${AOP_TORCH_NPU_ROOT}/include ${AOP_CANN_ROOT}/include)
      target_link_libraries(${op}_torch PRIVATE ${op}_npu_host ${AOP_TORCH_NPU_ROOT}/lib/libtorch_npu.so)
      # _torch then needs libtorch_npu.so (DT_NEEDED): find it beside torch when the loader
      # imports torch without auto-loading torch_npu.
      set_property(TARGET ${op}_torch APPEND PROPERTY INSTALL_RPATH "$ORIGIN/../../torch_npu/lib")
    endif()
  endif()

  # --- the Python front doors (api.py, torch_ops.py, ms.py) and MindSpore's Ascend op yaml,
  # generated from the description: the op's describe program prints it (describe.cpp.in),
  # ascend_ops.common.codegen writes the files (build/front/; installed into ascend_ops/<op>/).
  set(_front ${_bin}/front)
  if(_described)
    set(AOP_OP ${op})
    configure_file(${_AOP_CMAKE_DIR}/describe.cpp.in ${_bin}/generated/describe.cpp @ONLY)
    add_executable(${op}_describe ${_bin}/generated/describe.cpp)
    target_link_libraries(${op}_describe PRIVATE ${_host1})
    set(_front_py ${_front}/_description.py ${_front}/api.py ${_front}/torch_ops.py ${_front}/ms.py)
    add_custom_command(OUTPUT ${_front_py} ${_front}/ms_ascend/${op}_op.yaml ${_front}/description.json
      COMMAND ${op}_describe ${_front}/description.json
      COMMAND ${Python_EXECUTABLE} -m ascend_ops.common.codegen ${_front}/description.json ${op} ${_front}
      DEPENDS ${op}_describe
      COMMENT "ascend-ops ${op}: the Python front doors from the description (op.h)")
    add_custom_target(${op}_front ALL DEPENDS ${_front_py})
    install(FILES ${_front_py} DESTINATION ascend_ops/${op})
  endif()

  # --- _ms: MindSpore PyNative + Graph mode, always C++ ABI 0 ----------------------------
  if(_ms)
    if(_described)
      set(AOP_OP ${op})
      configure_file(${_AOP_CMAKE_DIR}/ms_module.cpp.in ${_bin}/generated/ms_module.cpp @ONLY)
      list(APPEND A_MINDSPORE ${_bin}/generated/ms_module.cpp)
      configure_file(${_AOP_CMAKE_DIR}/ms_graph_npu.cpp.in ${_bin}/generated/ms_graph_npu.cpp @ONLY)
      list(APPEND A_MINDSPORE_ASCEND ${_bin}/generated/ms_graph_npu.cpp)
    endif()
    add_library(${op}_ms MODULE ${A_MINDSPORE})
    set_target_properties(${op}_ms PROPERTIES OUTPUT_NAME _ms PREFIX "" SUFFIX ".${Python_SOABI}${CMAKE_SHARED_MODULE_SUFFIX}")
    _aop_module_common(${op}_ms ${op})
    _aop_host_library(_host0 ${op} 0 ${A_HOST})
    target_compile_definitions(${op}_ms PRIVATE MS_EXTENSION_NAME=_ms)
    target_link_libraries(${op}_ms PRIVATE ${_host0} aop::mindspore Python::Module)
    if(_msa)
      # The NPU host code once more with C++ ABI 0, for the _ms module (MindSpore's ABI).
      add_library(${op}_npu_host0 STATIC ${A_NPU_HOST})
      set_target_properties(${op}_npu_host0 PROPERTIES POSITION_INDEPENDENT_CODE ON)
      target_include_directories(${op}_npu_host0 PRIVATE ${AOP_CANN_ROOT}/include)
      target_link_libraries(${op}_npu_host0 PUBLIC ${_host0} ${op}_kernel_npu
        ${AOP_CANN_ROOT}/lib64/libascendcl.so)
      target_compile_definitions(${_host0} PUBLIC AOP_WITH_NPU=1)
      target_sources(${op}_ms PRIVATE ${A_MINDSPORE_ASCEND})
      target_compile_definitions(${op}_ms PRIVATE AOP_MS_ASCEND=1)
      target_link_libraries(${op}_ms PRIVATE ${op}_npu_host0 ${_ms_plugin}/libmindspore_ascend.so.2
        ${_ms_plugin}/libmindspore_ops_ascend.so)
      set_property(TARGET ${op}_ms APPEND PROPERTY INSTALL_RPATH "$ORIGIN/../../mindspore/lib/plugin")
      # The graph primitive, built ahead of time: MindSpore's own generator (what
      # CustomOpBuilder(op_def=...).load() runs) on the op's yaml gives the OpDef (compiled into
      # _ms beside the MS_CUSTOM_OPS_REGISTER kernel) and the primitive class, installed as
      # ascend_ops/<op>/_ms_graph.py; its eager function is ascend_ops.<op>.ms.<yaml name>.
      set(_ms_yaml ${_front}/ms_ascend/${op}_op.yaml)
      set(_ms_gen ${_bin}/ms_graph_gen)
      set(_ms_generator ${AOP_MINDSPORE_ROOT}/ops_generate)
      add_custom_command(OUTPUT ${_ms_gen}/gen_custom_ops_def.cc ${_ms_gen}/gen_ops_prim.py
        COMMAND ${CMAKE_COMMAND} -E env PYTHONPATH=${_ms_generator} ${Python_EXECUTABLE}
          ${_ms_generator}/gen_custom_ops.py -m ascend_ops.${op}.ms
          -i ${_front}/ms_ascend -o ${_ms_gen} -d ""
        WORKING_DIRECTORY ${_ms_generator}
        DEPENDS ${_ms_yaml}
        COMMENT "ascend-ops ${op}: MindSpore Ascend graph primitive from ${_ms_yaml}")
      target_sources(${op}_ms PRIVATE ${_ms_gen}/gen_custom_ops_def.cc)
      install(FILES ${_ms_gen}/gen_ops_prim.py DESTINATION ascend_ops/${op} RENAME _ms_graph.py)
    endif()
  endif()

  # --- what was built, for the loader and `ascend-ops list` --------------------------------
  foreach(_flag _emu _npu _sim _torch _tnpu _ms _msa)
    if(${_flag})
      set(${_flag}_py True)
    else()
      set(${_flag}_py False)
    endif()
  endforeach()
  set(AOP_OP ${op})
  set(AOP_OP_VERSION ${A_VERSION})
  set(AOP_BUILT_TORCH_VERSION "${AOP_TORCH_VERSION}")
  set(AOP_BUILT_MINDSPORE_VERSION "${AOP_MINDSPORE_VERSION}")
  configure_file(${_AOP_CMAKE_DIR}/op_build_info.py.in ${_bin}/_build_info.py @ONLY)
  install(FILES ${_bin}/_build_info.py DESTINATION ascend_ops/${op})
  message(STATUS "ascend-ops ${op} ${A_VERSION}: cpu=ON emu=${_emu} npu=${_npu} npu_sim=${_sim} torch=${_torch} torch_npu=${_tnpu} mindspore=${_ms} mindspore_ascend=${_msa}")
endfunction()
