# `cmake --install build --prefix P`: what a user of runmon gets.
#   P/bin/runmon                       the executable
#   P/lib/runmon/modules/*.so          its modules (module_loader.hpp looks there beside ../runmon-modules)
#   P/include/runmon/*.hpp             the C++ API (header-only: log.hpp)
#   P/share/cmake/runmon/              find_package(runmon): the target runmon::runmon, which carries
#                                      cxx_std_20 and the include directory, so a consumer that sets no
#                                      standard still builds
#   P/share/pkgconfig/runmon.pc        the same for pkg-config users (relocatable)
# The API is header-only, the same for every architecture: its package files go under share/, where CMake
# and pkg-config look too, so Debian's multiarch lib/<triplet> changes nothing.
#   P/lib/python3/dist-packages/runmon.py   the Python module (Debian's place for /usr's modules)
#   P/share/doc/runmon/                the README and docs/
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

add_library(runmon_api INTERFACE)
add_library(runmon::runmon ALIAS runmon_api)
set_target_properties(runmon_api PROPERTIES EXPORT_NAME runmon)
target_include_directories(runmon_api INTERFACE $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
                                                $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
target_compile_features(runmon_api INTERFACE cxx_std_20)
target_link_libraries(runmon_api INTERFACE Threads::Threads)

install(TARGETS runmon RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
get_property(runmon_modules GLOBAL PROPERTY RUNMON_MODULES)
install(TARGETS ${runmon_modules} LIBRARY DESTINATION lib/runmon/modules)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/runmon DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS runmon_api EXPORT runmonTargets)
install(EXPORT runmonTargets NAMESPACE runmon:: DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/cmake/runmon)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/runmonConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/runmonConfig.cmake
                              INSTALL_DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/cmake/runmon)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/runmonConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/runmonConfig.cmake ${PROJECT_BINARY_DIR}/runmonConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/cmake/runmon)
configure_file(${PROJECT_SOURCE_DIR}/cmake/runmon.pc.in ${PROJECT_BINARY_DIR}/runmon.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/runmon.pc DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/pkgconfig)
install(FILES ${PROJECT_SOURCE_DIR}/python/runmon.py DESTINATION lib/python3/dist-packages)
install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR})
