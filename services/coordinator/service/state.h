// What the coordinator's gRPC services share (services/coordinator/service/
// *_service.cc define one each, each a ServiceWithState): the store, the
// options, the auth gate, the caches of immutable rows a lease needs, the
// wake-up that LeaseJobs long-polls on, and the lease pool. Owned by CoordinatorServices (services.h), which
// outlives the services.
//
// Caches: spec versions, targets and registered workers never change, so the
// rows a lease needs are read from the database once (bounded: a cache is
// dropped whole when it grows too big).
//
// Long-poll: LeaseJobs waits between lease attempts in WaitForJobs. Submit
// and the requeuer (Wake) wake every waiter at once; jobs made available by
// another replica or by a lease running out are found by the fallback poll
// every options.lease_poll_ms.
#ifndef DUALSWARM_SERVICES_COORDINATOR_SERVICE_STATE_H_
#define DUALSWARM_SERVICES_COORDINATOR_SERVICE_STATE_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "dualswarm/v1/spec.pb.h"
#include "dualswarm/v1/target.pb.h"
#include "services/coordinator/lease_pool.h"
#include "services/coordinator/metrics.h"
#include "services/coordinator/service/auth.h"
#include "services/coordinator/services.h"
#include "services/coordinator/store/store.h"

namespace dualswarm::coord {

namespace v1 = ::dualswarm::v1;

class ServiceState {
 public:
  using Clock = std::chrono::steady_clock;

  ServiceState(Store* store, ServiceOptions options);
  ServiceState(const ServiceState&) = delete;
  ServiceState& operator=(const ServiceState&) = delete;

  Store* store() const { return store_; }
  const ServiceOptions& options() const { return options_; }
  CoordinatorMetrics* metrics() const { return options_.metrics; }  // may be null
  AuthGate& auth() { return auth_; }
  LeasePool& lease_pool() { return lease_pool_; }

  // The rows a lease needs, from the caches (the database on a miss).
  absl::StatusOr<std::shared_ptr<const v1::Spec>> CachedSpec(const std::string& hash);
  absl::StatusOr<std::shared_ptr<const v1::Target>> CachedTarget(int64_t id);
  // A registered worker. With `touch`, also records it as seen in the
  // database (for dualswarm_workers_alive), at most every lease_ms/3.
  absl::StatusOr<WorkerInfo> CachedWorker(const std::string& id, bool touch);

  // The long-poll: a generation counter that Wake bumps.
  uint64_t WakeGeneration();
  void Wake();
  // Waits until a wake-up newer than `seen` or `until`; false once stopping.
  bool WaitForJobs(uint64_t seen, Clock::time_point until);
  // Ends every wait (WaitForJobs returns false from now on).
  void StopWaiting();

 private:
  struct WorkerEntry {
    WorkerInfo info;
    Clock::time_point touched;  // last TouchWorker by this replica
  };
  static constexpr size_t kMaxCachedSpecBytes = 64 << 20;
  static constexpr size_t kMaxCachedEntries = 10000;

  static LeasePool::Options LeasePoolOptions(const ServiceOptions& o, ServiceState* state);

  Store* const store_;
  const ServiceOptions options_;
  AuthGate auth_;

  absl::Mutex cache_mu_;
  absl::flat_hash_map<std::string, std::shared_ptr<const v1::Spec>> spec_cache_ ABSL_GUARDED_BY(cache_mu_);
  size_t spec_cache_bytes_ ABSL_GUARDED_BY(cache_mu_) = 0;  // sources in spec_cache_
  absl::flat_hash_map<int64_t, std::shared_ptr<const v1::Target>> target_cache_ ABSL_GUARDED_BY(cache_mu_);
  absl::flat_hash_map<std::string, WorkerEntry> worker_cache_ ABSL_GUARDED_BY(cache_mu_);

  absl::Mutex wake_mu_;
  uint64_t wake_generation_ ABSL_GUARDED_BY(wake_mu_) = 0;
  bool stopping_ ABSL_GUARDED_BY(wake_mu_) = false;

  // Declared last, so destroyed first: its maintenance thread calls Wake().
  LeasePool lease_pool_;
};

// The base of each gRPC service (GrpcService is the generated
// v1::*Service::Service it implements): the ServiceState its handlers use.
template <typename GrpcService>
class ServiceWithState : public GrpcService {
 public:
  explicit ServiceWithState(ServiceState* state) : state_(state) {}

 protected:
  ServiceState* const state_;
};

}  // namespace dualswarm::coord

#endif  // DUALSWARM_SERVICES_COORDINATOR_SERVICE_STATE_H_
