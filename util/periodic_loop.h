// PeriodicLoop: a background thread that does one piece of work, waits,
// and does it again until stopped — the coordinator's campaign scheduler
// (a tick every interval) and its metrics refresher (the database gauges)
// are each one. Stop() wakes the wait at once, so shutting down never waits
// out an interval; work in progress finishes first.
#ifndef DUALSWARM_UTIL_PERIODIC_LOOP_H_
#define DUALSWARM_UTIL_PERIODIC_LOOP_H_

#include <functional>
#include <thread>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace dualswarm {

class PeriodicLoop {
 public:
  // Whether the thread starts with the work or with a pause (for a caller
  // that has just done the work itself).
  enum class Begin { kWithWork, kWithPause };

  PeriodicLoop() = default;
  PeriodicLoop(const PeriodicLoop&) = delete;
  PeriodicLoop& operator=(const PeriodicLoop&) = delete;
  ~PeriodicLoop() { Stop(); }

  // Starts the thread: work(), then pause() (asked again before every wait,
  // so it may change), and again; a no-op while running.
  void Start(std::function<void()> work, std::function<absl::Duration()> pause, Begin begin = Begin::kWithWork) {
    absl::MutexLock lock(&mu_);
    if (thread_.joinable()) return;
    stopping_ = false;
    thread_ = std::thread([this, work = std::move(work), pause = std::move(pause), begin] {
      if (begin == Begin::kWithWork) work();
      while (WaitUnlessStopped(pause())) work();
    });
  }

  // Stops the thread and joins it; the work in progress finishes first.
  // Start() may run it again.
  void Stop() {
    {
      absl::MutexLock lock(&mu_);
      stopping_ = true;
    }
    if (thread_.joinable()) thread_.join();
  }

 private:
  // Waits `pause`; false when Stop() came first.
  bool WaitUnlessStopped(absl::Duration pause) {
    absl::MutexLock lock(&mu_);
    return !mu_.AwaitWithTimeout(absl::Condition(&stopping_), pause);
  }

  absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;  // started and joined by the owner's thread only
};

}  // namespace dualswarm

#endif  // DUALSWARM_UTIL_PERIODIC_LOOP_H_
