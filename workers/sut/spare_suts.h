// SpareSuts: fresh SUTs launched ahead of need, so that a shrinking rerun
// that needs a fresh SUT takes one that is already up instead of waiting
// for a launch. A server that takes a second to start (Python, a JVM)
// otherwise costs that second on every candidate; with spares the launch
// of the next candidates' SUTs overlaps the current candidates' runs.
//
// A spare is fresh: launched from the same template, never given a
// request. It may have been up for a while when it is taken (a server
// with timers of its own has run them; its state is the one it starts
// with). A spare that died meanwhile is never handed out.
//
// At most `depth` SUTs are starting or waiting at once (those taken do not
// count). The depth starts low and grows by one, up to its most, whenever
// a taker found no spare ready: a server that starts in milliseconds keeps
// one or two spares, one that takes a second to start while candidates run
// in a tenth of that gets as many as its most. A launch that fails stops
// the pool (Take then returns nullptr and the caller launches its own,
// whose error is reported the usual way); the destructor cancels launches
// in progress and hands the spares to the reaper.
//
// Thread-safe: parallel candidates each take their own spare.
#ifndef DUALSWARM_WORKERS_SUT_SPARE_SUTS_H_
#define DUALSWARM_WORKERS_SUT_SPARE_SUTS_H_

#include <atomic>
#include <deque>
#include <memory>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "workers/sut/cluster.h"
#include "workers/sut/sut_reaper.h"

namespace dualswarm::workers {

// What every spare is launched from (SutCluster::Launch's arguments).
struct SpareLaunch {
  LaunchOptions node;
  int nodes = 1;
  bool relay_links = false;

  // A job takes a spare only when it would launch exactly the same.
  bool operator==(const SpareLaunch&) const = default;
};

class SpareSuts {
 public:
  // Starts `depth` launches at once (0 <= depth <= max_depth, max_depth >=
  // 1; 0: none until a taker asks). `reaper` (not owned) stops the spares
  // nobody took; it must outlive this.
  SpareSuts(SpareLaunch launch, int depth, int max_depth, SutReaper* reaper);
  ~SpareSuts();
  SpareSuts(const SpareSuts&) = delete;
  SpareSuts& operator=(const SpareSuts&) = delete;

  const SpareLaunch& launch() const { return launch_; }

  // A fresh SUT that is ready (waiting, if need be, for the launch started
  // earliest); nullptr once a launch has failed: the caller launches its
  // own.
  std::unique_ptr<SutCluster> Take();

  int taken() const { return taken_; }  // SUTs handed out
  int depth() const;                    // today's
  int ready() const;                    // spares up and waiting

 private:
  void LaunchLoop();  // one launching thread
  bool HasRoom() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return ready_.size() + starting_ < depth_; }
  bool ThreadMayGo() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stopped_ || HasRoom(); }
  bool TakerMayGo() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stopped_ || !ready_.empty(); }

  const SpareLaunch launch_;
  const size_t max_depth_;
  SutReaper* const reaper_;
  std::atomic<bool> closing_{false};  // the destructor runs: cancels launches in progress
  mutable absl::Mutex mu_;
  size_t depth_ ABSL_GUARDED_BY(mu_);                                   // grows while takers wait
  std::deque<std::unique_ptr<SutCluster>> ready_ ABSL_GUARDED_BY(mu_);  // oldest first
  size_t starting_ ABSL_GUARDED_BY(mu_) = 0;                            // launches in progress
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;                           // a launch failed, or closing
  std::atomic<int> taken_{0};
  std::vector<std::thread> threads_;  // started by the constructor, joined by the destructor
};

}  // namespace dualswarm::workers

#endif  // DUALSWARM_WORKERS_SUT_SPARE_SUTS_H_
