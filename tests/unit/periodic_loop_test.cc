// util/periodic_loop.h: the work runs at once or after the first pause, the
// pause is asked again each time, and Stop() does not wait out a pause.
#include "util/periodic_loop.h"

#include <atomic>
#include <chrono>
#include <thread>

#include <gtest/gtest.h>

namespace dualswarm {
namespace {

using Clock = std::chrono::steady_clock;

// Waits up to 10 s for `done`.
template <typename Pred>
bool WaitFor(Pred done) {
  auto deadline = Clock::now() + std::chrono::seconds(10);
  while (!done() && Clock::now() < deadline) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return done();
}

TEST(PeriodicLoop, WorksAtOnceThenEveryPause) {
  std::atomic<int> runs{0}, pauses{0};
  PeriodicLoop loop;
  loop.Start([&] { ++runs; },
             [&] {
               ++pauses;
               return absl::Milliseconds(1);
             });
  EXPECT_TRUE(WaitFor([&] { return runs.load() >= 3; }));
  loop.Stop();
  int after_stop = runs.load();
  EXPECT_GE(pauses.load(), after_stop - 1);  // asked before every wait
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(runs.load(), after_stop);  // stopped means stopped
}

TEST(PeriodicLoop, BeginWithPauseWaitsFirst) {
  std::atomic<int> runs{0};
  PeriodicLoop loop;
  loop.Start([&] { ++runs; }, [] { return absl::Hours(1); }, PeriodicLoop::Begin::kWithPause);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(runs.load(), 0);
  auto t0 = Clock::now();
  loop.Stop();  // wakes the hour-long pause
  EXPECT_LT(Clock::now() - t0, std::chrono::seconds(5));
  EXPECT_EQ(runs.load(), 0);
}

TEST(PeriodicLoop, StartsAgainAfterStopAndIgnoresASecondStart) {
  std::atomic<int> runs{0};
  PeriodicLoop loop;
  auto work = [&] { ++runs; };
  auto pause = [] { return absl::Hours(1); };
  loop.Start(work, pause);
  loop.Start(work, pause);  // already running: a no-op
  EXPECT_TRUE(WaitFor([&] { return runs.load() == 1; }));
  loop.Stop();
  loop.Start(work, pause);
  EXPECT_TRUE(WaitFor([&] { return runs.load() == 2; }));
  loop.Stop();  // and the destructor stops nothing twice
  EXPECT_EQ(runs.load(), 2);
}

}  // namespace
}  // namespace dualswarm
