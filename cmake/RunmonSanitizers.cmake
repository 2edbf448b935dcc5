# ASan + UBSan for the whole build when RUNMON_SANITIZE is on (the test command uses it). Debug info is cut
# to line tables, all a sanitizer's stack trace needs: a quarter less compile time and far smaller objects
# and links than full -g (tests/CMakeLists.txt also builds the test code itself unoptimised).
if(RUNMON_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
    $<$<CXX_COMPILER_ID:Clang>:-gline-tables-only> $<$<CXX_COMPILER_ID:GNU>:-g1>)
  add_link_options(-fsanitize=address,undefined)
endif()
# ThreadSanitizer instead, for the threaded parts' own build (scripts/check-thread-sanitizer.sh builds the
# in-process API's test with it): it cannot be combined with AddressSanitizer.
option(RUNMON_SANITIZE_THREAD "Build with ThreadSanitizer (not with RUNMON_SANITIZE)" OFF)
if(RUNMON_SANITIZE_THREAD)
  if(RUNMON_SANITIZE)
    message(FATAL_ERROR "RUNMON_SANITIZE_THREAD and RUNMON_SANITIZE exclude each other")
  endif()
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer $<$<CXX_COMPILER_ID:Clang>:-gline-tables-only>)
  add_link_options(-fsanitize=thread)
endif()
