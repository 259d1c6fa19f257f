#include "services/coordinator/metrics.h"

#include <algorithm>
#include <chrono>
#include <exception>
#include <utility>
#include <vector>

#include <prometheus/counter.h>
#include <prometheus/exposer.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "proto/names/wire_names.h"

namespace dualswarm::coord {
namespace {

using Clock = std::chrono::steady_clock;

// Latencies from 0.5 ms to 60 s (a LeaseJobs long-poll may wait a minute).
prometheus::Histogram::BucketBoundaries LatencyBuckets() {
  return {0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60};
}

// Job wall times from 10 ms to 2 hours.
prometheus::Histogram::BucketBoundaries DurationBuckets() {
  return {0.01, 0.1, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600, 1800, 3600, 7200};
}

// The metrics, each named and explained once: a family (labelled children)
// or its one unlabelled child.
prometheus::Family<prometheus::Gauge>& GaugeFamily(prometheus::Registry& r, const char* name, const char* help) {
  return prometheus::BuildGauge().Name(name).Help(help).Register(r);
}
prometheus::Gauge& Gauge(prometheus::Registry& r, const char* name, const char* help) {
  return GaugeFamily(r, name, help).Add({});
}
prometheus::Family<prometheus::Counter>& CounterFamily(prometheus::Registry& r, const char* name, const char* help) {
  return prometheus::BuildCounter().Name(name).Help(help).Register(r);
}
prometheus::Counter& Counter(prometheus::Registry& r, const char* name, const char* help) {
  return CounterFamily(r, name, help).Add({});
}
prometheus::Histogram& Histogram(prometheus::Registry& r, const char* name, const char* help,
                                 const prometheus::Histogram::BucketBoundaries& buckets) {
  return prometheus::BuildHistogram().Name(name).Help(help).Register(r).Add({}, buckets);
}

// "/dualswarm.v1.WorkerService/LeaseJobs" -> "WorkerService/LeaseJobs".
std::string MethodLabel(const char* method) {
  absl::string_view m = method == nullptr ? "" : method;
  if (!m.empty() && m[0] == '/') m.remove_prefix(1);
  size_t dot = m.substr(0, m.find('/')).rfind('.');
  if (dot != absl::string_view::npos) m.remove_prefix(dot + 1);
  return std::string(m);
}

class RpcCounterInterceptor final : public grpc::experimental::Interceptor {
 public:
  RpcCounterInterceptor(CoordinatorMetrics* metrics, const char* method) : metrics_(metrics), method_(method) {}

  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(grpc::experimental::InterceptionHookPoints::PRE_SEND_STATUS))
      metrics_->RpcFinished(method_, methods->GetSendStatus().error_code());
    methods->Proceed();
  }

 private:
  CoordinatorMetrics* metrics_;
  const char* method_;
};

class RpcCounterFactory final : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  explicit RpcCounterFactory(CoordinatorMetrics* metrics) : metrics_(metrics) {}
  grpc::experimental::Interceptor* CreateServerInterceptor(grpc::experimental::ServerRpcInfo* info) override {
    return new RpcCounterInterceptor(metrics_, info->method());
  }

 private:
  CoordinatorMetrics* metrics_;
};

}  // namespace

CoordinatorMetrics::CoordinatorMetrics(Store* store, Options options)
    : store_(store), options_(options), registry_(std::make_shared<prometheus::Registry>()) {
  prometheus::Registry& r = *registry_;
  runs_ = &GaugeFamily(r, "dualswarm_runs", "Runs by state (from the database)");
  jobs_ = &GaugeFamily(r, "dualswarm_jobs", "Jobs by state, over all runs (from the database)");
  findings_ = &Gauge(r, "dualswarm_findings",
                     "Finding groups: distinct signatures per spec version and target (from the database)");
  workers_alive_ =
      &Gauge(r, "dualswarm_workers_alive",
             "Workers that registered, leased or heartbeat within the last 3 lease durations (from the database)");
  database_up_ = &Gauge(r, "dualswarm_database_up", "1 if the last refresh of the database gauges succeeded, else 0");
  refresh_seconds_ =
      &Gauge(r, "dualswarm_stats_refresh_seconds", "How long the last refresh of the database gauges took");
  lease_latency_ = &Histogram(
      r, "dualswarm_lease_latency_seconds",
      "LeaseJobs calls that returned jobs: time from the call arriving to the response, long-poll wait included",
      LatencyBuckets());
  lease_query_ =
      &Histogram(r, "dualswarm_lease_query_seconds",
                 "The store's lease transaction (every attempt, also those that found no job)", LatencyBuckets());
  jobs_leased_ =
      &Counter(r, "dualswarm_jobs_leased_total", "Leases handed out (a job leased again after an expiry counts again)");
  pool_jobs_ = &Counter(r, "dualswarm_lease_pool_jobs_total",
                        "Jobs LeaseJobs handed out from the lease pool's held jobs (no database statement)");
  pool_returned_ = &Counter(r, "dualswarm_lease_pool_returned_total",
                            "Prefetched jobs nobody took within the hold time, put back in the queue");
  pool_held_ =
      &Gauge(r, "dualswarm_lease_pool_held",
             "Jobs the lease pool holds (leased ahead of demand) for the last LeaseJobs call's adapters and labels");
  campaign_firings_ = &CounterFamily(r, "dualswarm_campaign_firings_total",
                                     "Campaign firings by this replica, by result (submitted a run, or failed)");
  job_duration_ =
      &Histogram(r, "dualswarm_job_duration_seconds",
                 "Wall time of completed jobs as their workers report it (CompleteJob.seconds)", DurationBuckets());
  completed_ = &CounterFamily(r, "dualswarm_jobs_completed_total",
                              "Accepted job completions by outcome (duplicates not counted)");
  counterexamples_ =
      &Counter(r, "dualswarm_counterexamples_total", "Counterexamples reported (FAILED completions accepted)");
  rpcs_ = &CounterFamily(r, "dualswarm_rpcs_total", "gRPC calls handled, by method (Service/Method) and status code");
  for (v1::RunState s : wire::EnumValues<v1::RunState>()) runs_->Add({{"state", wire::EnumWord(s)}});
  for (v1::JobState s : wire::EnumValues<v1::JobState>()) jobs_->Add({{"state", wire::EnumWord(s)}});
  for (v1::JobOutcome o : wire::EnumValues<v1::JobOutcome>()) completed_->Add({{"outcome", wire::EnumWord(o)}});
  for (const char* res : {"submitted", "failed"}) campaign_firings_->Add({{"result", res}});
}

CoordinatorMetrics::~CoordinatorMetrics() {
  refresher_.Stop();
  exposer_.reset();
}

absl::StatusOr<int> CoordinatorMetrics::Serve(const std::string& listen) {
  if (exposer_ != nullptr) return absl::FailedPreconditionError("metrics are already served");
  try {
    exposer_ = std::make_unique<prometheus::Exposer>(listen, 2);
  } catch (const std::exception& e) {
    return absl::UnavailableError(absl::StrCat("cannot serve metrics on ", listen, ": ", e.what()));
  }
  exposer_->RegisterCollectable(registry_);
  std::vector<int> ports = exposer_->GetListeningPorts();
  if (ports.empty() || ports[0] <= 0) {
    exposer_.reset();
    return absl::UnavailableError(absl::StrCat("cannot serve metrics on ", listen));
  }
  Refresh();  // the first scrape already sees the database
  // A slow database (a huge jobs table) is asked less often: the query
  // takes at most a tenth of the time.
  refresher_.Start([this] { Refresh(); },
                   [this] {
                     return absl::Milliseconds(std::max<int64_t>(
                         options_.refresh_ms, static_cast<int64_t>(refresh_seconds_->Value() * 10000)));
                   },
                   PeriodicLoop::Begin::kWithPause);
  return ports[0];
}

void CoordinatorMetrics::LeaseServed(double seconds, int jobs) {
  lease_latency_->Observe(seconds);
  jobs_leased_->Increment(jobs);
}

void CoordinatorMetrics::LeaseQueried(double seconds) { lease_query_->Observe(seconds); }

void CoordinatorMetrics::LeasePoolServed(int from_pool, int held) {
  if (from_pool > 0) pool_jobs_->Increment(from_pool);
  pool_held_->Set(held);
}

void CoordinatorMetrics::LeasePoolReturned(int jobs) { pool_returned_->Increment(jobs); }

void CoordinatorMetrics::CampaignFired(bool submitted) {
  campaign_firings_->Add({{"result", submitted ? "submitted" : "failed"}}).Increment();
}

void CoordinatorMetrics::JobCompleted(v1::JobOutcome outcome, double seconds) {
  job_duration_->Observe(std::max(seconds, 0.0));
  completed_->Add({{"outcome", wire::EnumWord(outcome)}}).Increment();
  if (outcome == v1::JOB_OUTCOME_FAILED) counterexamples_->Increment();
}

std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface> CoordinatorMetrics::RpcCounter() {
  return std::make_unique<RpcCounterFactory>(this);
}

void CoordinatorMetrics::RpcFinished(const char* method, grpc::StatusCode code) {
  rpcs_->Add({{"method", MethodLabel(method)}, {"code", absl::StatusCodeToString(static_cast<absl::StatusCode>(code))}})
      .Increment();
}

void CoordinatorMetrics::Refresh() {
  auto t0 = Clock::now();
  auto stats = store_->Stats(3 * options_.lease_ms);
  refresh_seconds_->Set(std::chrono::duration<double>(Clock::now() - t0).count());
  if (!stats.ok()) {
    database_up_->Set(0);  // the gauges keep their last values
    return;
  }
  database_up_->Set(1);
  for (const auto& [state, n] : stats->runs_by_state) runs_->Add({{"state", wire::EnumWord(state)}}).Set(n);
  for (const auto& [state, n] : stats->jobs_by_state) jobs_->Add({{"state", wire::EnumWord(state)}}).Set(n);
  findings_->Set(static_cast<double>(stats->findings));
  workers_alive_->Set(static_cast<double>(stats->workers_alive));
}

}  // namespace dualswarm::coord
