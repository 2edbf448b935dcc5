// Logs five steps of a loss and a summary through <runmon/log.hpp>, as a training program would.
#include <runmon/log.hpp>

int main() {
  for (int step = 0; step < 5; ++step) runmon::log({{"loss", 1.0 / (step + 1)}}, step);
  runmon::summary({{"best_loss", 0.2}});
  return runmon::flush() && runmon::dropped() == 0 ? 0 : 1;
}
