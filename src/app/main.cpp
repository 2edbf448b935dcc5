// The runmon executable: the command line (commands.hpp). protobuf's own log lines are discarded: a run
// log's damage (a record cut off, text that is not UTF-8 where a reader's tail read lands inside a record)
// is found and reported by runmon's readers in their words, and protobuf would print its own message for it
// on stderr, in the middle of `serve`'s and `leet`'s output, each time.
#include <google/protobuf/stubs/logging.h>

#include "app/commands.hpp"

int main(int argc, char** argv) {
  google::protobuf::SetLogHandler(nullptr);
  return runmon::RunCommandLine(argc, argv);
}
