# `cpack -G DEB` (or plain `cpack`) in a build directory: runmon_<version>_<arch>.deb, holding under /usr
# everything `cmake --install` installs (cmake/RunmonInstall.cmake: the executable, its modules, the C++
# API and its CMake and pkg-config files, the Python module in /usr/lib/python3/dist-packages, the docs)
# and the man pages (cmake/RunmonManPages.cmake).
# Depends is derived from the binaries themselves (dpkg-shlibdeps, from dpkg-dev, over the executable, the
# modules and any library), so it names the shared libraries this build links, at the versions of the
# Debian that built it. libcurl is not linked: runmon loads it at the first OpenMetrics scrape or remote
# write, so it is recommended rather than required; python3 is needed only by the Python module and the
# Graphcore IPU helper. The files are stripped (the symbols the modules take from the executable are
# dynamic ones, which strip keeps). scripts/check-deb-package.sh builds, installs, runs and removes it.
include(${CMAKE_CURRENT_LIST_DIR}/RunmonManPages.cmake)

set(RUNMON_PACKAGE_MAINTAINER "runmon maintainers <runmon-maintainers@example.org>"
    CACHE STRING "The Maintainer field of runmon's Debian package")

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME runmon)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT ${RUNMON_PACKAGE_MAINTAINER})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "system metrics of machine-learning runs, under W&B's metric names")
set(CPACK_PACKAGE_DESCRIPTION
    "runmon samples what a machine does during a machine-learning run (CPU, memory, disk, network, NVIDIA
and AMD GPUs, AWS Trainium, Graphcore IPUs, Google TPUs and the run's process tree) at a fixed interval,
under the metric keys of Weights & Biases' system metrics, and records each run in W&B's run-log format.
It shows runs in the terminal (runmon leet) and in a local web dashboard (runmon serve), and serves or
pushes the metrics to Prometheus. The package also holds the C++ and Python clients with which a training
script logs its own metrics into the run.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "libcurl4 | libcurl3-gnutls")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "python3")
include(CPack)
