// The coordinator's gRPC services (proto/dualswarm/v1) over the Store, built
// and owned as one: SpecService, TargetService, RunService, FindingService,
// CampaignService and WorkerService, one file each under
// services/coordinator/service/, sharing a ServiceState (service/state.h:
// caches, the LeaseJobs long-poll, the lease pool). The scheduler that fires
// campaigns is scheduler.h; rows <-> messages is proto_convert.h.
//
// Each RPC, in this order: the auth interceptor (service/auth.h) has
// authenticated the caller and looked its role up in the role table, and
// the handler first asks for that verdict (UNAUTHENTICATED /
// PERMISSION_DENIED before anything about the request is looked at, so a
// caller without the right role learns nothing from validation errors);
// validates the request (ids, page sizes, sizes; spec uploads: no NUL, then
// the spec must load); calls the store, which validates what it keeps
// (names, limits, budgets, gen names against the spec version, no NUL — nor
// CR/LF in one-line fields — in any text) and returns INVALID_ARGUMENT
// naming the field; and maps absl::Status codes to gRPC codes unchanged.
//
// LeaseJobs long-polls without holding a database connection: it sleeps on
// a wake-up that Submit and the requeuer signal, and asks the database again
// at least every lease_poll_ms (jobs submitted through another replica,
// expired leases). Under high lease rates it takes jobs from the lease pool
// (lease_pool.h), which leases ahead of demand. Spec versions, targets and
// workers are immutable and cached after their first read; valid tokens are
// cached briefly.
//
// Auth: a bearer token in the "authorization" metadata ("Bearer TOKEN").
// Missing or unknown token: UNAUTHENTICATED; a role that may not call the
// RPC: PERMISSION_DENIED. Roles (the table is in service/auth.cc):
//   admin      everything
//   submitter  specs, runs, findings, campaigns, reading targets
//   worker     WorkerService
#ifndef DUALSWARM_SERVICES_COORDINATOR_SERVICES_H_
#define DUALSWARM_SERVICES_COORDINATOR_SERVICES_H_

#include <cstdint>
#include <memory>
#include <vector>

#include <grpcpp/grpcpp.h>
#include <grpcpp/support/server_interceptor.h>

#include "services/coordinator/store/store.h"

namespace dualswarm::coord {

class CoordinatorMetrics;

struct ServiceOptions {
  bool require_auth = true;               // false: every caller is an anonymous admin (local use, tests)
  int64_t lease_ms = 30000;               // how long a lease lasts without a heartbeat
  int64_t max_wait_ms = 60000;            // longest LeaseJobs long-poll
  int64_t lease_poll_ms = 250;            // a waiting LeaseJobs asks the database at least this often
  int64_t lease_prefetch_ms = 50;         // lease pool hold time (lease_pool.h); 0: lease only what is asked
  int64_t watch_poll_ms = 250;            // how often Watch looks for changes
  int64_t token_cache_ms = 10000;         // a valid token is remembered this long (revocation delay)
  CoordinatorMetrics* metrics = nullptr;  // events go here when set (must outlive the services)
};

class CoordinatorServices {
 public:
  CoordinatorServices(Store* store, ServiceOptions options);
  ~CoordinatorServices();
  // Register these with a grpc::ServerBuilder; they live as long as this object.
  std::vector<grpc::Service*> services();
  // The interceptor that authorizes every call; the services refuse calls it
  // has not seen, so register it with the same builder
  // (experimental().SetInterceptorCreators), first.
  std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface> AuthInterceptor();
  // Wakes waiting LeaseJobs calls: jobs may have become available (the
  // requeuer calls this; Submit does it by itself).
  void NotifyJobsAvailable();
  // Ends waiting LeaseJobs calls (empty) and keeps new ones from waiting;
  // call before grpc::Server::Shutdown.
  void Shutdown();

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace dualswarm::coord

#endif  // DUALSWARM_SERVICES_COORDINATOR_SERVICES_H_
