# Finds Python and pybind11 through the Python that runs the build, and defines _aop_python():
# for common's own binding (ascend_ops.common._runtime) and for every op (AscendOpsFrameworks).
include_guard(GLOBAL)

find_package(Python 3.9 REQUIRED COMPONENTS Interpreter Development.Module)

# Runs a Python snippet; stores its stdout lines in <out_var> (a list), or "" on failure.
function(_aop_python out_var code)
  execute_process(
    COMMAND ${CMAKE_COMMAND} -E env TORCH_DEVICE_BACKEND_AUTOLOAD=0
            ${Python_EXECUTABLE} -c "${code}"
    OUTPUT_VARIABLE _out ERROR_VARIABLE _err RESULT_VARIABLE _rc
    OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(_rc EQUAL 0)
    string(REPLACE "\n" ";" _out "${_out}")
    set(${out_var} "${_out}" PARENT_SCOPE)
  else()
    set(${out_var} "" PARENT_SCOPE)
  endif()
endfunction()

if(NOT DEFINED AOP_PYBIND11_DIR)
  _aop_python(_pb "import pybind11; print(pybind11.get_cmake_dir())")
  set(AOP_PYBIND11_DIR "${_pb}" CACHE PATH "pybind11 CMake dir")
endif()
find_package(pybind11 CONFIG REQUIRED HINTS ${AOP_PYBIND11_DIR})
