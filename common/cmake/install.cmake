# Installs the runtime into the wheel as ascend_ops/common/{lib,include,cmake} plus a package
# config, so ops find it with find_package(AscendOpsCommon CONFIG) through
# `python -c "import ascend_ops.common as c; print(c.cmake_dir())"`.
include(CMakePackageConfigHelpers)

set(AOP_PKG_DIR ascend_ops/common)
set(AOP_CMAKE_DIR ${AOP_PKG_DIR}/cmake)

install(TARGETS ascend_ops_common ascend_ops_ascendc_cpu
  EXPORT AscendOpsCommonTargets
  LIBRARY DESTINATION ${AOP_PKG_DIR}/lib
  ARCHIVE DESTINATION ${AOP_PKG_DIR}/lib)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/ DESTINATION ${AOP_PKG_DIR}/include)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/ascendc_cpu/include/ DESTINATION ${AOP_PKG_DIR}/include/emu)
# Device code two kernels share (the check phase, LoadTiling): on every kernel's include path,
# for the emulator build and for CANN's ascendc_library (AscendOpsOp.cmake).
install(DIRECTORY ${PROJECT_SOURCE_DIR}/kernel/include/ DESTINATION ${AOP_PKG_DIR}/include/kernel)
if(AOP_WITH_NPU_SIM)  # the simulated runtime: its own include dir, never beside CANN's acl/
  install(TARGETS ascend_sim EXPORT AscendOpsCommonTargets LIBRARY DESTINATION ${AOP_PKG_DIR}/lib)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/ascend_sim/include/ DESTINATION ${AOP_PKG_DIR}/include/sim)
endif()
install(EXPORT AscendOpsCommonTargets NAMESPACE AscendOpsCommon:: DESTINATION ${AOP_CMAKE_DIR})

configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/AscendOpsCommonConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/AscendOpsCommonConfig.cmake
  INSTALL_DESTINATION ${AOP_CMAKE_DIR})
# Ops built against 0.x refuse a different minor: the C ABI number is checked at load time too.
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/AscendOpsCommonConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES
  ${CMAKE_CURRENT_BINARY_DIR}/AscendOpsCommonConfig.cmake
  ${CMAKE_CURRENT_BINARY_DIR}/AscendOpsCommonConfigVersion.cmake
  ${CMAKE_CURRENT_LIST_DIR}/AscendOpsOp.cmake
  ${CMAKE_CURRENT_LIST_DIR}/AscendOpsFrameworks.cmake
  ${CMAKE_CURRENT_LIST_DIR}/AscendOpsPython.cmake
  ${CMAKE_CURRENT_LIST_DIR}/op_build_info.py.in
  ${CMAKE_CURRENT_LIST_DIR}/module_init.cpp.in
  ${CMAKE_CURRENT_LIST_DIR}/npu_launch.cpp.in
  ${CMAKE_CURRENT_LIST_DIR}/core_module.cpp.in
  ${CMAKE_CURRENT_LIST_DIR}/torch_module.cpp.in
  ${CMAKE_CURRENT_LIST_DIR}/torch_npu_module.cpp.in
  ${CMAKE_CURRENT_LIST_DIR}/ms_module.cpp.in
  ${CMAKE_CURRENT_LIST_DIR}/ms_graph_npu.cpp.in
  ${CMAKE_CURRENT_LIST_DIR}/describe.cpp.in
  DESTINATION ${AOP_CMAKE_DIR})

# Tells Python where the installed files are, also in an editable install where the Python
# sources stay in the checkout.
configure_file(${CMAKE_CURRENT_LIST_DIR}/_build_info.py.in ${CMAKE_CURRENT_BINARY_DIR}/_build_info.py @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/_build_info.py DESTINATION ${AOP_PKG_DIR})
