// Worker metrics: what a dualswarm-worker exposes on /metrics (Prometheus
// text format, prometheus-cpp) — slots and busy slots, jobs run by outcome,
// tester requests sent (rate = steps/s) and current steps/s, checker
// frontier size, solver calls and time, shrink reruns, and coordinator call
// failures. The daemon updates them; Serve() starts the HTTP endpoint.
#ifndef DUALSWARM_WORKERS_DAEMON_WORKER_METRICS_H_
#define DUALSWARM_WORKERS_DAEMON_WORKER_METRICS_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "dualswarm/v1/worker.pb.h"

namespace dualswarm::workers {

namespace v1 = ::dualswarm::v1;

class WorkerMetrics {
 public:
  WorkerMetrics();
  ~WorkerMetrics();

  // Serves /metrics on HOST:PORT (port 0: any free port); returns the port.
  absl::StatusOr<int> Serve(const std::string& listen);

  void SetSlots(int slots);
  void SetBusySlots(int busy);
  // A job ended with the outcome its child reported (labelled with the
  // outcome's word, proto/names/wire_names.h), or was stopped before it
  // reported (its run cancelled, its lease lost: labelled "cancelled").
  void JobEnded(v1::JobOutcome outcome, double seconds);
  void JobStopped(double seconds);
  // Requests sent since the last call (summed over jobs) and the current rate.
  void AddRequests(uint64_t sent);
  void SetStepsPerSecond(double rate);
  void SetFrontier(uint64_t largest);  // the largest frontier among running jobs
  void AddSolver(uint64_t checks, uint64_t z3_calls, double z3_seconds);
  // A job's checker time and its longest single observation (the checker's
  // lag: the tester sends nothing new while the checker works).
  void AddChecker(double seconds, double max_observe_seconds);
  void AddShrinkReruns(uint64_t reruns);
  void CoordinatorError(const std::string& method);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace dualswarm::workers

#endif  // DUALSWARM_WORKERS_DAEMON_WORKER_METRICS_H_
