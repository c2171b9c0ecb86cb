# The Debian package: `cpack -G DEB` in a build directory writes efu_<version>_<arch>.deb with
# everything `cmake --install` installs: efu, the plugins and the generators, libefu_common, the
# SDK (headers, the CMake package, the .fbs schemas), the systemd unit, the plugins' shipped
# configs and the example configuration (docs/operations.md, "Debian package").
#
# The package installs under the build's CMAKE_INSTALL_PREFIX (/usr/local unless the build was
# configured with another): the binaries carry absolute paths of that prefix (the plugin
# folder, each plugin's shipped configs, the unit's ExecStart), so the files must land where
# the build said they would. Configure with -DCMAKE_INSTALL_PREFIX=/usr for a /usr package.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME efu)
set(CPACK_PACKAGE_VENDOR efu)
set(CPACK_PACKAGE_CONTACT "efu developers <efu@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "event formation for neutron and particle detectors")
set(CPACK_PACKAGING_INSTALL_PREFIX ${CMAKE_INSTALL_PREFIX})
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # efu_<version>_<arch>.deb
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
  "efu receives timestamped detector readouts over UDP, forms neutron events with a
detector plugin (udp, multiblade, caen, ...) and publishes ev44, x5f2 and ar51
FlatBuffers to Kafka. Includes the generators, the systemd unit efu@.service and
the SDK for out-of-tree plugins (headers and CMake package).")
# Depends: the shared libraries the binaries and plugins link, found by dpkg-shlibdeps.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# Recommends: what building a plugin against the SDK needs (find_package(efu) brings in spdlog
# and nlohmann_json; the schema headers include FlatBuffers). A runtime-only install (the
# container image) leaves them out with --no-install-recommends.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS
  "cmake (>= 3.25), g++, ninja-build | make, libspdlog-dev, nlohmann-json3-dev, libflatbuffers-dev")
# postinst: the system user the unit runs as.
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA ${CMAKE_CURRENT_LIST_DIR}/postinst)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
include(CPack)
