// Coordinator metrics: the Prometheus registry behind the coordinator's
// /metrics endpoint (prometheus-cpp), what feeds it, and the HTTP exposer.
//
// Three sources:
//   * the services report events as they happen (a lease that returned jobs,
//     a completed job, a counterexample): counters and histograms;
//   * a gRPC server interceptor counts every RPC by method and status code;
//   * a background thread asks the database (Store::Stats, one aggregate
//     query) every refresh period for the gauges that describe its contents:
//     runs and jobs by state, finding groups, live workers. Scrapes never
//     touch the database.
// Every metric is named dualswarm_*; docs/coordinator.md lists them.
//
// Thread-safe. With several coordinator replicas every replica serves the
// same database gauges; counters and histograms are per replica (sum them).
#ifndef DUALSWARM_SERVICES_COORDINATOR_METRICS_H_
#define DUALSWARM_SERVICES_COORDINATOR_METRICS_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include <grpcpp/grpcpp.h>
#include <grpcpp/support/server_interceptor.h>

#include "absl/status/statusor.h"
#include "services/coordinator/store/store.h"
#include "util/periodic_loop.h"

namespace prometheus {
class Counter;
class Exposer;
class Gauge;
class Histogram;
class Registry;
template <typename T>
class Family;
}  // namespace prometheus

namespace dualswarm::coord {

class CoordinatorMetrics {
 public:
  struct Options {
    int64_t lease_ms = 30000;   // a worker is alive if seen within 3 lease durations
    int64_t refresh_ms = 2000;  // how often the database gauges are refreshed (at least)
  };

  CoordinatorMetrics(Store* store, Options options);
  ~CoordinatorMetrics();  // stops the exposer and the refresher

  // Serves /metrics on HOST:PORT (port 0: any free port) and starts the
  // database refresher. Returns the port; UNAVAILABLE if it cannot listen.
  absl::StatusOr<int> Serve(const std::string& listen);

  // A LeaseJobs call that handed out `jobs` jobs after `seconds` (including
  // any long-poll wait).
  void LeaseServed(double seconds, int jobs);
  // One Store::LeaseJobs statement (every call, also empty ones, also the
  // lease pool's background prefetches).
  void LeaseQueried(double seconds);
  // The lease pool (lease_pool.h): `from_pool` of a LeaseJobs call's jobs
  // came from held jobs; `held` jobs are held now for the call's adapters
  // and labels.
  void LeasePoolServed(int from_pool, int held);
  // Held jobs nobody took went back to the queue.
  void LeasePoolReturned(int jobs);
  // A campaign firing: `submitted` when it submitted a run, else it failed
  // (its campaign's last_error says why).
  void CampaignFired(bool submitted);
  // An accepted (not duplicate) completion; `seconds` as the worker
  // reported it; a FAILED outcome also counts a counterexample.
  void JobCompleted(v1::JobOutcome outcome, double seconds);

  // Counts every RPC by method and code; add to the ServerBuilder
  // (experimental().SetInterceptorCreators). Lives as long as this object.
  std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface> RpcCounter();
  void RpcFinished(const char* method, grpc::StatusCode code);

  // Refreshes the database gauges now (the refresher calls this).
  void Refresh();

 private:
  Store* store_;
  Options options_;
  std::shared_ptr<prometheus::Registry> registry_;
  std::unique_ptr<prometheus::Exposer> exposer_;

  prometheus::Family<prometheus::Gauge>* runs_ = nullptr;
  prometheus::Family<prometheus::Gauge>* jobs_ = nullptr;
  prometheus::Gauge* findings_ = nullptr;
  prometheus::Gauge* workers_alive_ = nullptr;
  prometheus::Gauge* database_up_ = nullptr;
  prometheus::Gauge* refresh_seconds_ = nullptr;
  prometheus::Histogram* lease_latency_ = nullptr;
  prometheus::Histogram* lease_query_ = nullptr;
  prometheus::Counter* jobs_leased_ = nullptr;
  prometheus::Counter* pool_jobs_ = nullptr;
  prometheus::Counter* pool_returned_ = nullptr;
  prometheus::Gauge* pool_held_ = nullptr;
  prometheus::Family<prometheus::Counter>* campaign_firings_ = nullptr;
  prometheus::Histogram* job_duration_ = nullptr;
  prometheus::Family<prometheus::Counter>* completed_ = nullptr;
  prometheus::Counter* counterexamples_ = nullptr;
  prometheus::Family<prometheus::Counter>* rpcs_ = nullptr;

  PeriodicLoop refresher_;  // Refresh(), every refresh period, once Serve() has run
};

}  // namespace dualswarm::coord

#endif  // DUALSWARM_SERVICES_COORDINATOR_METRICS_H_
