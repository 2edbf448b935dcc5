// The runmon command line: `runmon sample`, `runmon info`, `runmon catalog`, --help, --version.
#pragma once

namespace runmon {

int RunCommandLine(int argc, char** argv);

}  // namespace runmon
