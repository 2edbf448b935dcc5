// The image module's entry (see ImageModule in image.hpp and modules/module_loader.hpp).
#include "media/image.hpp"
#include "media/image_decode.hpp"

extern "C" const void* runmon_image_module() {
  using runmon::media::ImageModule;
  static const ImageModule table{
      .header = {.abi = ImageModule::kModuleAbi, .table_size = sizeof(ImageModule)},
      .decode =
          [](std::string_view bytes, const runmon::media::DecodeLimits& limits) {
            return runmon::media::DecodeImage(bytes, limits);
          },
  };
  return &table;
}
