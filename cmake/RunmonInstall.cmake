# `cmake --install build --prefix P`: what a user of runmon gets.
#   P/bin/runmon                       the executable
#   P/lib/runmon/modules/*.so          its modules (module_loader.hpp looks there beside ../runmon-modules)
#   P/include/runmon/                  the C++ API: log.hpp (header-only, over `runmon run`'s channel),
#                                      run.hpp (runmon inside a program) and its C interface runmon.h
#   P/<libdir>/librunmon.so*           the library behind run.hpp and runmon.h (src/run_api)
#   P/<libdir>/cmake/runmon/           find_package(runmon): the target runmon::runmon, which carries the
#                                      library, cxx_std_20 and the include directory, so a consumer that
#                                      sets no standard still builds
#   P/<libdir>/pkgconfig/runmon.pc     the same for pkg-config users (relocatable)
#   P/lib/python3/dist-packages/runmon.py   the Python module (Debian's place for /usr's modules)
#   P/share/doc/runmon/                the README and docs/
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(TARGETS runmon RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
get_property(runmon_modules GLOBAL PROPERTY RUNMON_MODULES)
install(TARGETS ${runmon_modules} LIBRARY DESTINATION lib/runmon/modules)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/runmon DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS runmon_library EXPORT runmonTargets LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(EXPORT runmonTargets NAMESPACE runmon:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/runmon)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/runmonConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/runmonConfig.cmake
                              INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/runmon)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/runmonConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/runmonConfig.cmake ${PROJECT_BINARY_DIR}/runmonConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/runmon)
# The .pc file finds the prefix from where it lies: as many directories up as <libdir>/pkgconfig is deep.
set(pkgconfig_dir ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
file(RELATIVE_PATH RUNMON_PC_TO_PREFIX /prefix/${pkgconfig_dir} /prefix)
configure_file(${PROJECT_SOURCE_DIR}/cmake/runmon.pc.in ${PROJECT_BINARY_DIR}/runmon.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/runmon.pc DESTINATION ${pkgconfig_dir})
install(FILES ${PROJECT_SOURCE_DIR}/python/runmon.py DESTINATION lib/python3/dist-packages)
install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR})
