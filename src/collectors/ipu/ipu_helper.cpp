// The gcipuinfo helper's Python source (see ipu_helper.hpp for its protocol). It reads stdin with
// readline, not iteration, so each request is answered as soon as its line arrives; it writes each answer
// with one write and a flush, so runmon never sees half of one unless the helper dies in it.
#include "collectors/ipu/ipu_helper.hpp"

namespace runmon::ipu {

std::string_view HelperSource() {
  return R"PY(import json
import sys


def emit(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


try:
    import gcipuinfo
except ImportError as error:
    emit({"error": str(error), "missing_module": True})
    sys.exit(3)
try:
    info = gcipuinfo.gcipuinfo()
    info.setUpdateMode(True)
except Exception as error:
    emit({"error": "gcipuinfo: %s: %s" % (type(error).__name__, error)})
    sys.exit(4)
emit({"ready": True})
while True:
    line = sys.stdin.readline()
    if not line:
        break
    request = line.strip()
    try:
        devices = [{str(name): str(value) for name, value in device.items()} for device in info.getDevices()]
    except Exception as error:
        emit({"request": request, "error": "getDevices: %s: %s" % (type(error).__name__, error)})
        continue
    emit({"request": request, "devices": devices})
)PY";
}

}  // namespace runmon::ipu
