# Checks that the TUI and the dashboard reach run logs only through runmon_runview: none of their targets
# links runmon_runlog itself, and none of their sources includes a runlog/ header (runview's own headers may;
# what they expose is runview's to keep). Run by ctest (runview.only_door_to_run_logs).
# Variables: TARGETS (names joined by |), LINKS_<target> (its LINK_LIBRARIES joined by |), SOURCE_DIRS (|).
foreach(var TARGETS SOURCE_DIRS)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "only_door_check.cmake: ${var} is not set")
  endif()
endforeach()

set(problems)
string(REPLACE "|" ";" targets "${TARGETS}")
foreach(target IN LISTS targets)
  string(REPLACE "|" ";" links "${LINKS_${target}}")
  foreach(link IN LISTS links)
    if(link MATCHES "(^|[^a-z_])runmon_runlog($|[^a-z_])")
      list(APPEND problems "${target} links ${link}: reach run logs through runmon_runview")
    endif()
  endforeach()
endforeach()

string(REPLACE "|" ";" dirs "${SOURCE_DIRS}")
foreach(dir IN LISTS dirs)
  file(GLOB_RECURSE sources LIST_DIRECTORIES false "${dir}/*.cpp" "${dir}/*.hpp" "${dir}/*.h")
  if(NOT sources)
    list(APPEND problems "${dir}: no sources found (is the path right?)")
  endif()
  foreach(source IN LISTS sources)
    file(STRINGS "${source}" includes REGEX "^[ \t]*#[ \t]*include[ \t]*[<\"]runlog/")
    foreach(line IN LISTS includes)
      list(APPEND problems "${source}: ${line}: include runview/ headers instead")
    endforeach()
  endforeach()
endforeach()

if(problems)
  list(JOIN problems "\n  " text)
  message(FATAL_ERROR "The TUI and the dashboard must reach run logs only through runview:\n  ${text}")
endif()
