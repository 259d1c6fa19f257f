// WarmSuts: launched SUTs kept running between shrinking reruns and
// brought back to a fresh state by the target's reset command, instead of
// relaunched for every candidate. For a server that is slow to start (a
// JVM, a Python server, a database) a relaunch costs seconds per
// candidate; a reset (e.g. "find {dir}/root -mindepth 1 -delete", or
// "curl -fsS -X POST http://127.0.0.1:{port}/reset") costs milliseconds.
//
// A reset that fails, times out, or leaves a node not ready again stops
// that SUT (through the reaper) and the caller launches a fresh one; after
// one failure no reset is tried again (every SUT is launched fresh), so a
// broken reset costs one launch, never a verdict. A reset that exits 0 but
// leaves state behind is the target's mistake: shrinking may then keep a
// candidate that only failed because of leftovers, which is why the
// verification replays that measure a counterexample's reproduction rate
// always run on freshly launched SUTs.
//
// Without a reset command a SUT is reused as it is, for candidates whose
// requests were renamed to partitions no run touched before
// (engine/harness/fresh_resources.h): the state earlier runs left lies in
// other partitions, which the spec says the candidate's requests never
// touch. The verification replays run on fresh SUTs all the same.
//
// Thread-safe: parallel candidates each take their own SUT; at most
// `max_idle` wait between reruns, the rest are stopped.
#ifndef DUALSWARM_WORKERS_SUT_WARM_SUTS_H_
#define DUALSWARM_WORKERS_SUT_WARM_SUTS_H_

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "workers/sut/cluster.h"
#include "workers/sut/sut_reaper.h"

namespace dualswarm::workers {

class WarmSuts {
 public:
  // `reaper` (not owned) stops what is not reused; it must outlive this.
  WarmSuts(std::string reset_command, int reset_timeout_ms, SutReaper* reaper, int max_idle = 4);
  ~WarmSuts();  // hands every idle SUT to the reaper

  // An idle SUT, reset (when there is a reset command) and ready; nullptr
  // when none is idle or its reset failed (that one is stopped): the
  // caller launches a fresh one.
  std::unique_ptr<SutCluster> TakeReset();
  // A SUT a job is done with, for the next TakeReset.
  void Give(std::unique_ptr<SutCluster> sut);

  int resets() const { return resets_; }         // that succeeded
  int failed_resets() const { return failed_; }  // that stopped their SUT

 private:
  const std::string reset_command_;
  const int reset_timeout_ms_;
  SutReaper* const reaper_;
  const size_t max_idle_;
  absl::Mutex mu_;
  std::vector<std::unique_ptr<SutCluster>> idle_ ABSL_GUARDED_BY(mu_);
  std::atomic<int> resets_{0};
  std::atomic<int> failed_{0};
};

}  // namespace dualswarm::workers

#endif  // DUALSWARM_WORKERS_SUT_WARM_SUTS_H_
