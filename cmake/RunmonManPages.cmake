# runmon's man pages: runmon(1) and runmon-COMMAND(1) for every command, nested ones as
# runmon-leet-config(1). They are written after each build of runmon by `runmon --generate-man-pages DIR`,
# from the very command-line tree that parses runmon's arguments (src/app/man_pages.hpp), so they list
# what --help lists and cannot go stale. The folder is emptied first: a command taken out leaves no page.
# Installed into share/man/man1; the ctest test man_pages (tests/man_pages) checks them.
set(RUNMON_MAN_PAGES_DIR ${PROJECT_BINARY_DIR}/man/man1)
set(runmon_man_pages_stamp ${PROJECT_BINARY_DIR}/man/pages.stamp)
# Under the sanitizers runmon runs here as in the tests, but the build has no suppressions file and need
# not look for leaks: detect_leaks=0.
add_custom_command(
  OUTPUT ${runmon_man_pages_stamp}
  COMMAND ${CMAKE_COMMAND} -E rm -rf ${RUNMON_MAN_PAGES_DIR}
  COMMAND ${CMAKE_COMMAND} -E env ASAN_OPTIONS=detect_leaks=0
          $<TARGET_FILE:runmon> --generate-man-pages ${RUNMON_MAN_PAGES_DIR}
  COMMAND ${CMAKE_COMMAND} -E touch ${runmon_man_pages_stamp}
  DEPENDS runmon
  COMMENT "Writing runmon's man pages"
  VERBATIM)
add_custom_target(runmon_man_pages ALL DEPENDS ${runmon_man_pages_stamp})
install(DIRECTORY ${RUNMON_MAN_PAGES_DIR}/ DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
