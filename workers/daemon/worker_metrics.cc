#include "workers/daemon/worker_metrics.h"

#include <exception>
#include <mutex>

#include <prometheus/counter.h>
#include <prometheus/exposer.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include "absl/strings/str_cat.h"
#include "proto/names/wire_names.h"

namespace dualswarm::workers {

using prometheus::BuildCounter;
using prometheus::BuildGauge;
using prometheus::BuildHistogram;

// The outcome label of a job stopped before it reported (not a JobOutcome:
// the coordinator never hears of it).
constexpr char kStopped[] = "cancelled";

struct WorkerMetrics::Impl {
  std::shared_ptr<prometheus::Registry> registry = std::make_shared<prometheus::Registry>();
  std::unique_ptr<prometheus::Exposer> exposer;
  prometheus::Gauge& slots;
  prometheus::Gauge& busy;
  prometheus::Family<prometheus::Counter>& jobs;
  prometheus::Histogram& job_seconds;
  prometheus::Counter& requests;
  prometheus::Gauge& steps_per_second;
  prometheus::Gauge& frontier;
  prometheus::Counter& solver_checks;
  prometheus::Counter& z3_calls;
  prometheus::Counter& z3_seconds;
  prometheus::Counter& checker_seconds;
  prometheus::Histogram& checker_max_observe;
  prometheus::Counter& shrink_reruns;
  prometheus::Family<prometheus::Counter>& coordinator_errors;

  Impl()
      : slots(BuildGauge()
                  .Name("dualswarm_worker_slots")
                  .Help("Jobs this worker runs at once")
                  .Register(*registry)
                  .Add({})),
        busy(BuildGauge()
                 .Name("dualswarm_worker_slots_busy")
                 .Help("Slots running a job now")
                 .Register(*registry)
                 .Add({})),
        jobs(BuildCounter().Name("dualswarm_worker_jobs_total").Help("Jobs run, by outcome").Register(*registry)),
        job_seconds(
            BuildHistogram()
                .Name("dualswarm_worker_job_duration_seconds")
                .Help("Wall time of a job on this worker, shrinking included")
                .Register(*registry)
                .Add({}, prometheus::Histogram::BucketBoundaries{0.1, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600})),
        requests(BuildCounter()
                     .Name("dualswarm_worker_requests_sent_total")
                     .Help("Requests the testers sent (rate() = tester steps per second)")
                     .Register(*registry)
                     .Add({})),
        steps_per_second(BuildGauge()
                             .Name("dualswarm_worker_steps_per_second")
                             .Help("Requests per second over the running jobs, last heartbeat interval")
                             .Register(*registry)
                             .Add({})),
        frontier(BuildGauge()
                     .Name("dualswarm_worker_frontier_size")
                     .Help("Largest checker frontier (explanations alive) among the running jobs")
                     .Register(*registry)
                     .Add({})),
        solver_checks(BuildCounter()
                          .Name("dualswarm_worker_solver_checks_total")
                          .Help("Satisfiability checks the checkers asked for (finished jobs)")
                          .Register(*registry)
                          .Add({})),
        z3_calls(BuildCounter()
                     .Name("dualswarm_worker_z3_calls_total")
                     .Help("Checks that reached Z3 (finished jobs)")
                     .Register(*registry)
                     .Add({})),
        z3_seconds(BuildCounter()
                       .Name("dualswarm_worker_z3_seconds_total")
                       .Help("Time spent in Z3 (finished jobs)")
                       .Register(*registry)
                       .Add({})),
        checker_seconds(BuildCounter()
                            .Name("dualswarm_worker_checker_seconds_total")
                            .Help("Wall time the checkers spent explaining observations (finished jobs)")
                            .Register(*registry)
                            .Add({})),
        checker_max_observe(
            BuildHistogram()
                .Name("dualswarm_worker_checker_max_observe_seconds")
                .Help("Per finished job: the longest the checker took over one observation "
                      "(the tester sends nothing new meanwhile)")
                .Register(*registry)
                .Add({}, prometheus::Histogram::BucketBoundaries{0.001, 0.01, 0.05, 0.1, 0.5, 1, 5, 30})),
        shrink_reruns(BuildCounter()
                          .Name("dualswarm_worker_shrink_reruns_total")
                          .Help("Reruns against fresh SUTs while shrinking counterexamples")
                          .Register(*registry)
                          .Add({})),
        coordinator_errors(BuildCounter()
                               .Name("dualswarm_worker_coordinator_errors_total")
                               .Help("Failed calls to the coordinator, by method")
                               .Register(*registry)) {
    // Every label value exists from the start (at 0): a family without
    // children is not exported at all, so dashboards and rate() would see
    // nothing until the first job ended or the first call failed.
    for (v1::JobOutcome o : wire::EnumValues<v1::JobOutcome>()) jobs.Add({{"outcome", wire::EnumWord(o)}});
    jobs.Add({{"outcome", kStopped}});
    for (const char* m : {"LeaseJobs", "Heartbeat", "CompleteJob"}) coordinator_errors.Add({{"method", m}});
  }
};

WorkerMetrics::WorkerMetrics() : impl_(std::make_unique<Impl>()) {}
WorkerMetrics::~WorkerMetrics() = default;

absl::StatusOr<int> WorkerMetrics::Serve(const std::string& listen) {
  try {
    impl_->exposer = std::make_unique<prometheus::Exposer>(listen, 1);
    impl_->exposer->RegisterCollectable(impl_->registry);
    auto ports = impl_->exposer->GetListeningPorts();
    if (ports.empty()) return absl::UnavailableError(absl::StrCat("cannot serve metrics on ", listen));
    return ports[0];
  } catch (const std::exception& e) {
    return absl::UnavailableError(absl::StrCat("cannot serve metrics on ", listen, ": ", e.what()));
  }
}

void WorkerMetrics::SetSlots(int slots) { impl_->slots.Set(slots); }
void WorkerMetrics::SetBusySlots(int busy) { impl_->busy.Set(busy); }
void WorkerMetrics::JobEnded(v1::JobOutcome outcome, double seconds) {
  std::string word = wire::EnumWord(outcome);
  impl_->jobs.Add({{"outcome", word.empty() ? "?" : word}}).Increment();
  impl_->job_seconds.Observe(seconds);
}
void WorkerMetrics::JobStopped(double seconds) {
  impl_->jobs.Add({{"outcome", kStopped}}).Increment();
  impl_->job_seconds.Observe(seconds);
}
void WorkerMetrics::AddRequests(uint64_t sent) { impl_->requests.Increment(static_cast<double>(sent)); }
void WorkerMetrics::SetStepsPerSecond(double rate) { impl_->steps_per_second.Set(rate); }
void WorkerMetrics::SetFrontier(uint64_t largest) { impl_->frontier.Set(static_cast<double>(largest)); }
void WorkerMetrics::AddSolver(uint64_t checks, uint64_t z3_calls, double z3_seconds) {
  impl_->solver_checks.Increment(static_cast<double>(checks));
  impl_->z3_calls.Increment(static_cast<double>(z3_calls));
  impl_->z3_seconds.Increment(z3_seconds);
}
void WorkerMetrics::AddChecker(double seconds, double max_observe_seconds) {
  impl_->checker_seconds.Increment(seconds);
  impl_->checker_max_observe.Observe(max_observe_seconds);
}
void WorkerMetrics::AddShrinkReruns(uint64_t reruns) { impl_->shrink_reruns.Increment(static_cast<double>(reruns)); }
void WorkerMetrics::CoordinatorError(const std::string& method) {
  impl_->coordinator_errors.Add({{"method", method}}).Increment();
}

}  // namespace dualswarm::workers
