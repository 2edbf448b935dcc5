# browser.npm_ci: copies package.json and package-lock.json to DEST (in the build tree) and runs npm ci
# there, so the tests' node_modules never land in the source tree.
#   cmake -DSOURCE=tests/browser -DDEST=<build>/tests/browser/deps -DNPM=npm -P npm_ci.cmake
foreach(var SOURCE DEST NPM)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "npm_ci.cmake: -D${var}=... is required")
  endif()
endforeach()
file(MAKE_DIRECTORY ${DEST})
file(COPY ${SOURCE}/package.json ${SOURCE}/package-lock.json DESTINATION ${DEST})
execute_process(COMMAND ${NPM} ci --no-audit --no-fund --loglevel=error
                WORKING_DIRECTORY ${DEST}
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "npm ci in ${DEST} failed (${rc})")
endif()
