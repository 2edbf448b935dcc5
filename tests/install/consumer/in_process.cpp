// runmon inside a program, through the installed <runmon/run.hpp> and librunmon.so: a run of its own in
// the directory given as its argument, five steps of a loss, a summary, finished with exit code 0.
#include <runmon/run.hpp>

#include <cstdio>
#include <exception>

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  try {
    auto run = runmon::Run::start({.dir = argv[1], .name = "in-process consumer", .interval = 0.2});
    for (int step = 0; step < 5; ++step) run.log({{"loss", 1.0 / (step + 1)}}, step);
    run.summary({{"best_loss", 0.2}});
    return run.finish(0) && run.dropped() == 0 ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}
