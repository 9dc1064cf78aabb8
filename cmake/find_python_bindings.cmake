# What the Python package (python/) needs: Debian's python3 (its development headers and
# NumPy) and pybind11's CMake package. Sets TESSEL_PYTHON (the interpreter) and
# TESSEL_PYTHON_BINDINGS_FOUND; quiet when something is missing (the package is then
# not built). /usr/bin/python3 first: Debian's python3-numpy, python3-scipy and
# python3-pybind11 install for it, and a pyenv python3 on PATH lacks them.
set(TESSEL_PYTHON_BINDINGS_FOUND OFF)
find_program(TESSEL_PYTHON python3 PATHS /usr/bin NO_DEFAULT_PATH)
if(NOT TESSEL_PYTHON)
  find_program(TESSEL_PYTHON python3)
endif()
if(TESSEL_PYTHON)
  set(Python_EXECUTABLE ${TESSEL_PYTHON})
  find_package(Python 3 QUIET COMPONENTS Interpreter Development.Module)
  if(Python_FOUND)
    execute_process(COMMAND ${Python_EXECUTABLE} -c "import numpy"
                    RESULT_VARIABLE _tessel_numpy OUTPUT_QUIET ERROR_QUIET)
    if(_tessel_numpy EQUAL 0)
      # Python_FOUND set: pybind11 uses the interpreter found above (FindPython mode).
      find_package(pybind11 CONFIG QUIET)
      if(pybind11_FOUND)
        set(TESSEL_PYTHON_BINDINGS_FOUND ON)
      endif()
    endif()
  endif()
endif()
# A sanitizer build (scripts/sanitize.sh) leaves it out by default: an extension module
# built with -fsanitize cannot be loaded into an uninstrumented python3.
if(TESSEL_PYTHON_BINDINGS_FOUND AND "${CMAKE_CXX_FLAGS}" MATCHES "-fsanitize" AND NOT DEFINED TESSEL_BUILD_PYTHON)
  set(TESSEL_PYTHON_BINDINGS_FOUND OFF)
  message(STATUS "tessel: sanitizer build: the Python package is not built (-DTESSEL_BUILD_PYTHON=ON to force)")
elseif(TESSEL_PYTHON_BINDINGS_FOUND)
  message(STATUS "tessel: Python package with ${Python_EXECUTABLE} (Python ${Python_VERSION}), pybind11 ${pybind11_VERSION}")
elseif(TESSEL_BUILD_PYTHON)
  message(FATAL_ERROR "TESSEL_BUILD_PYTHON is ON but pybind11, python3's development headers or NumPy "
                      "were not found (Debian: apt-get install pybind11-dev python3-dev python3-numpy)")
else()
  message(STATUS "tessel: no pybind11 or python3 with NumPy found: the Python package is not built")
endif()
