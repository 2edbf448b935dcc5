// The runmon command line: `runmon sample`, `info`, `run`, `dump`, `leet`, `serve`, `exporter`, `catalog`,
// --help, --version.
#pragma once

namespace runmon {

int RunCommandLine(int argc, char** argv);

}  // namespace runmon
