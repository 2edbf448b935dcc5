// The dashboard's files (web/, built by Vite at compile time), embedded in the binary by embed_assets.cmake.
#pragma once

#include <span>

#include "web/server.hpp"

namespace runmon::web {

std::span<const Asset> EmbeddedAssets();

}  // namespace runmon::web
