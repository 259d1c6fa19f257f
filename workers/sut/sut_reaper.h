// SutReaper: stops launched SUTs in the background. A shrinking rerun or a
// verification replay is decided the moment its verdict is in, but a SUT
// may take seconds to stop (Apache takes 1.6-2.5 s after SIGTERM), and a
// rerun that waits for it wastes that time on every candidate. A job given
// a reaper (JobOptions::sut_reaper) hands its SUT over instead of stopping
// it; the next candidate starts at once on a fresh SUT (its own directory
// and leased ports) while the old one stops.
//
// Bounded: at most `max_stopping` SUTs stop at once and as many more wait
// their turn; Adopt waits while that many wait; the destructor waits until every adopted SUT has stopped, so
// none outlives the reaper's owner.
#ifndef DUALSWARM_WORKERS_SUT_SUT_REAPER_H_
#define DUALSWARM_WORKERS_SUT_SUT_REAPER_H_

#include <deque>
#include <memory>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "workers/sut/cluster.h"

namespace dualswarm::workers {

class SutReaper {
 public:
  explicit SutReaper(int max_stopping = 4);
  ~SutReaper();
  SutReaper(const SutReaper&) = delete;
  SutReaper& operator=(const SutReaper&) = delete;

  // Stops and removes `sut` in the background; waits while `max_stopping`
  // others are queued.
  void Adopt(std::unique_ptr<SutCluster> sut);

 private:
  void StopQueued();  // one stopping thread's loop
  bool HasRoom() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return queue_.size() < max_queued_; }
  bool HasWorkOrCloses() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return closing_ || !queue_.empty(); }

  const size_t max_queued_;
  absl::Mutex mu_;
  std::deque<std::unique_ptr<SutCluster>> queue_ ABSL_GUARDED_BY(mu_);  // adopted, not yet being stopped
  bool closing_ ABSL_GUARDED_BY(mu_) = false;                           // the destructor runs: drain and exit
  std::vector<std::thread> threads_;  // started by the constructor, joined by the destructor
};

}  // namespace dualswarm::workers

#endif  // DUALSWARM_WORKERS_SUT_SUT_REAPER_H_
