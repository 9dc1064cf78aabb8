# Install rules (included from the top CMakeLists.txt when TESSEL_INSTALL is on).
#
#   include/tessel/*.h                  the public headers
#   lib/libtessel.a or libtessel.so*    the library (BUILD_SHARED_LIBS picks)
#   bin/tessel                          the tool, when built
#   lib/cmake/tessel/                   tesselConfig.cmake, tesselConfigVersion.cmake,
#                                       tesselTargets*.cmake: find_package(tessel) -> tessel::tessel
#   lib/pkgconfig/tessel.pc             pkg-config --cflags --libs tessel
#
# Nothing installed names the source or build tree: the JIT's C prelude is compiled into the
# library, and both package files find the prefix from their own location.
include(CMakePackageConfigHelpers)

get_target_property(_tessel_type tessel TYPE)

install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/tessel DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.h")
install(TARGETS tessel EXPORT tesselTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
if(TARGET tessel-tool)
  if(_tessel_type STREQUAL "SHARED_LIBRARY")
    # bin/tessel finds lib/libtessel.so wherever the prefix is.
    file(RELATIVE_PATH _tessel_bin_to_lib ${CMAKE_INSTALL_FULL_BINDIR} ${CMAKE_INSTALL_FULL_LIBDIR})
    set_target_properties(tessel-tool PROPERTIES INSTALL_RPATH "$ORIGIN/${_tessel_bin_to_lib}")
  endif()
  install(TARGETS tessel-tool RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()

set(TESSEL_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/tessel)
install(EXPORT tesselTargets NAMESPACE tessel:: DESTINATION ${TESSEL_CMAKE_DIR})
# What tesselConfig.cmake looks for before it loads the targets.
set(TESSEL_WITH_MPI ${MPI_C_FOUND})
set(TESSEL_WITH_ZLIB ${ZLIB_FOUND})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/tesselConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/tesselConfig.cmake
                              INSTALL_DESTINATION ${TESSEL_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/tesselConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/tesselConfig.cmake ${PROJECT_BINARY_DIR}/tesselConfigVersion.cmake
        DESTINATION ${TESSEL_CMAKE_DIR})

# tessel.pc. The link flags of the dependencies, as flags: a library path becomes -l<name>
# (with -L<dir> unless the linker searches <dir> anyway).
function(_tessel_pc_flags out)
  set(flags "")
  foreach(lib IN LISTS ARGN)
    if(lib MATCHES "^-")
      list(APPEND flags "${lib}")
    elseif(IS_ABSOLUTE "${lib}")
      get_filename_component(dir "${lib}" DIRECTORY)
      get_filename_component(name "${lib}" NAME)
      if(name MATCHES "^lib(.+)\\.(so|a)(\\..*)?$")
        if(NOT dir IN_LIST CMAKE_CXX_IMPLICIT_LINK_DIRECTORIES)
          list(APPEND flags "-L${dir}")
        endif()
        list(APPEND flags "-l${CMAKE_MATCH_1}")
      else()
        list(APPEND flags "${lib}")
      endif()
    elseif(NOT lib STREQUAL "")
      list(APPEND flags "-l${lib}")
    endif()
  endforeach()
  list(REMOVE_DUPLICATES flags)
  list(JOIN flags " " flags)
  set(${out} "${flags}" PARENT_SCOPE)
endfunction()
set(_tessel_dep_libs "")
if(TESSEL_OPENBLAS_LIB AND TESSEL_CBLAS_INCLUDE)
  list(APPEND _tessel_dep_libs ${TESSEL_OPENBLAS_LIB})
endif()
if(MPI_C_FOUND)
  list(APPEND _tessel_dep_libs ${MPI_C_LIBRARIES})
  separate_arguments(_tessel_mpi_link_flags UNIX_COMMAND "${MPI_C_LINK_FLAGS}")
  list(APPEND _tessel_dep_libs ${_tessel_mpi_link_flags})
endif()
if(ZLIB_FOUND)
  list(APPEND _tessel_dep_libs ${ZLIB_LIBRARIES})
endif()
list(APPEND _tessel_dep_libs ${CMAKE_DL_LIBS})
_tessel_pc_flags(_tessel_dep_flags ${_tessel_dep_libs})
separate_arguments(_tessel_omp UNIX_COMMAND "${OpenMP_CXX_FLAGS}")
list(JOIN _tessel_omp " " _tessel_omp)
set(TESSEL_PC_DEP_LIBS "${_tessel_dep_flags} ${_tessel_omp} -pthread")
if(_tessel_type STREQUAL "SHARED_LIBRARY")
  # libtessel.so records its own dependencies; a static link (--static) needs them.
  set(TESSEL_PC_LIBS "")
  set(TESSEL_PC_LIBS_PRIVATE "${TESSEL_PC_DEP_LIBS}")
else()
  # libtessel.a records nothing: even the plain `pkg-config --libs tessel` names them.
  set(TESSEL_PC_LIBS "${TESSEL_PC_DEP_LIBS}")
  set(TESSEL_PC_LIBS_PRIVATE "")
endif()
# prefix from the .pc file's own directory (pkg-config's ${pcfiledir}), so the prefix given
# to `cmake --install --prefix` (or a moved prefix) is the one used.
set(TESSEL_PC_DIR ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}" OR IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
  set(TESSEL_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
  set(TESSEL_PC_LIBDIR "${CMAKE_INSTALL_FULL_LIBDIR}")
  set(TESSEL_PC_INCLUDEDIR "${CMAKE_INSTALL_FULL_INCLUDEDIR}")
else()
  file(RELATIVE_PATH _tessel_pc_up /x/${TESSEL_PC_DIR} /x)
  string(REGEX REPLACE "/$" "" _tessel_pc_up "${_tessel_pc_up}")
  set(TESSEL_PC_PREFIX "\${pcfiledir}/${_tessel_pc_up}")
  set(TESSEL_PC_LIBDIR "\${prefix}/${CMAKE_INSTALL_LIBDIR}")
  set(TESSEL_PC_INCLUDEDIR "\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}")
endif()
configure_file(${PROJECT_SOURCE_DIR}/cmake/tessel.pc.in ${PROJECT_BINARY_DIR}/tessel.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/tessel.pc DESTINATION ${TESSEL_PC_DIR})
