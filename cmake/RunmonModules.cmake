# runmon's modules (src/modules/module_loader.hpp): shared objects in <build>/runmon-modules that the runmon
# executable loads when a command needs them, so that the libraries only they use (cpp-httplib with OpenSSL,
# ncursesw) are never mapped by `runmon run` or `runmon sample`.
#
#   runmon_add_module(NAME OBJECTS <object libraries> LINK <third-party libraries>)
#
# A module is the code of its object libraries (one of them holds its entry), linked with only the
# third-party libraries that code needs; the object libraries are compiled with their own usage requirements
# (and can be linked into tests as they are). Every runmon symbol it calls besides is the executable's: the executable is linked with
# its symbols exported and with the runmon libraries listed in RUNMON_MODULE_HOST_LIBRARIES linked whole
# (runmon_link_module_hosts), so a module never carries a second copy of runmon's code or of the run log's
# protobuf descriptors (which protobuf would refuse to register twice).
set(RUNMON_MODULE_DIRECTORY ${PROJECT_BINARY_DIR}/runmon-modules)
set_property(GLOBAL PROPERTY RUNMON_MODULES "")

function(runmon_add_module name)
  cmake_parse_arguments(module "" "" "OBJECTS;LINK" ${ARGN})
  set(target runmon_module_${name})
  set(objects "")
  foreach(library IN LISTS module_OBJECTS)
    list(APPEND objects $<TARGET_OBJECTS:${library}>)
    set_target_properties(${library} PROPERTIES POSITION_INDEPENDENT_CODE ON)
  endforeach()
  add_library(${target} MODULE ${objects})
  set_target_properties(${target} PROPERTIES PREFIX "" OUTPUT_NAME ${name}
    LIBRARY_OUTPUT_DIRECTORY ${RUNMON_MODULE_DIRECTORY})
  target_link_libraries(${target} PRIVATE ${module_LINK})
  set_property(GLOBAL APPEND PROPERTY RUNMON_MODULES ${target})
endfunction()

# Links `executable` as the modules' host: the host libraries whole, the runmon symbols the modules call
# exported (a dynamic list made from the modules' undefined symbols, cmake/module_exports.cmake), every
# module built with it.
find_program(RUNMON_CXXFILT NAMES c++filt REQUIRED)
function(runmon_link_module_hosts executable)
  set(whole "")
  foreach(library IN LISTS RUNMON_MODULE_HOST_LIBRARIES)
    list(APPEND whole $<TARGET_FILE:${library}>)
    add_dependencies(${executable} ${library})
  endforeach()
  target_link_options(${executable} PRIVATE LINKER:--whole-archive ${whole} LINKER:--no-whole-archive)
  get_property(modules GLOBAL PROPERTY RUNMON_MODULES)
  set(module_files "")
  foreach(module IN LISTS modules)
    list(APPEND module_files $<TARGET_FILE:${module}>)
  endforeach()
  set(exports ${CMAKE_CURRENT_BINARY_DIR}/${executable}-module-exports.list)
  add_custom_command(OUTPUT ${exports}
    COMMAND ${CMAKE_COMMAND} -DNM=${CMAKE_NM} -DCXXFILT=${RUNMON_CXXFILT} -DOUT=${exports} "-DMODULES=${module_files}"
            -P ${PROJECT_SOURCE_DIR}/cmake/module_exports.cmake
    DEPENDS ${modules} ${PROJECT_SOURCE_DIR}/cmake/module_exports.cmake
    COMMENT "Listing the symbols runmon's modules call"
    VERBATIM)
  add_custom_target(${executable}_module_exports DEPENDS ${exports})
  add_dependencies(${executable} ${executable}_module_exports)
  target_link_options(${executable} PRIVATE LINKER:--dynamic-list=${exports})
  set_property(TARGET ${executable} APPEND PROPERTY LINK_DEPENDS ${exports})
endfunction()
