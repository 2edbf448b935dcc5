# Warning flags shared by every runmon target: -Wall -Wextra -Wpedantic, errors by default.
function(runmon_set_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion)
  # GCC 12 at -O3 reports std::string copies inlined from libstdc++ as overlapping memcpy (GCC bug 105329,
  # a false positive); the real checks come from the sanitizer build.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
    target_compile_options(${target} PRIVATE -Wno-restrict)
  endif()
  if(RUNMON_WARNINGS_AS_ERRORS)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()
