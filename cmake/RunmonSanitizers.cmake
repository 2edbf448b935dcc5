# ASan + UBSan for the whole build when RUNMON_SANITIZE is on (the test command uses it). Debug info is cut
# to line tables, all a sanitizer's stack trace needs: a quarter less compile time and far smaller objects
# and links than full -g (tests/CMakeLists.txt also builds the test code itself unoptimised).
if(RUNMON_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
    $<$<CXX_COMPILER_ID:Clang>:-gline-tables-only> $<$<CXX_COMPILER_ID:GNU>:-g1>)
  add_link_options(-fsanitize=address,undefined)
endif()
