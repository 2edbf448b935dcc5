// runmon's entry point.
#include "app/commands.hpp"

int main(int argc, char** argv) {
  return runmon::RunCommandLine(argc, argv);
}
