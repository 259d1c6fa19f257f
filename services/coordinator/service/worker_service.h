// WorkerService (proto/dualswarm/v1/worker.proto): the worker protocol.
// Workers register, lease jobs (a long-poll: LeaseJobs sleeps on the shared
// wake-up without holding a database connection, taking jobs through the
// lease pool), heartbeat their leases (learning which jobs to cancel) and
// complete jobs with their outcome and counterexample.
#ifndef DUALSWARM_SERVICES_COORDINATOR_SERVICE_WORKER_SERVICE_H_
#define DUALSWARM_SERVICES_COORDINATOR_SERVICE_WORKER_SERVICE_H_

#include <vector>

#include "absl/container/flat_hash_set.h"
#include "dualswarm/v1/worker.grpc.pb.h"
#include "services/coordinator/service/state.h"

namespace dualswarm::coord {

class WorkerServiceImpl final : public v1::WorkerService::Service {
 public:
  explicit WorkerServiceImpl(ServiceState* state) : state_(state) {}

  grpc::Status Register(grpc::ServerContext* ctx, const v1::RegisterWorkerRequest* req,
                        v1::RegisterWorkerResponse* resp) override;
  grpc::Status LeaseJobs(grpc::ServerContext* ctx, const v1::LeaseJobsRequest* req,
                         v1::LeaseJobsResponse* resp) override;
  grpc::Status Heartbeat(grpc::ServerContext* ctx, const v1::HeartbeatRequest* req,
                         v1::HeartbeatResponse* resp) override;
  grpc::Status CompleteJob(grpc::ServerContext* ctx, const v1::CompleteJobRequest* req,
                           v1::CompleteJobResponse* resp) override;

 private:
  grpc::Status CheckLeaseRequest(const v1::LeaseJobsRequest& req) const;
  // Leases until a job comes, the request's wait ends, the call is
  // cancelled or the coordinator shuts down.
  absl::StatusOr<std::vector<LeasedJob>> LeaseWithWait(grpc::ServerContext* ctx, const LeaseRequest& lr,
                                                       int64_t wait_ms);
  // Puts `jobs` in `resp`, with their specs (only their hashes for those in
  // `known`) and targets, up to the response budget; leases past it are
  // given back.
  grpc::Status FillLeaseResponse(const std::vector<LeasedJob>& jobs, const absl::flat_hash_set<std::string>& known,
                                 v1::LeaseJobsResponse* resp);
  // The store's Completion for a CompleteJob request.
  static absl::StatusOr<Completion> CompletionOf(const v1::CompleteJobRequest& req);

  ServiceState* state_;
};

}  // namespace dualswarm::coord

#endif  // DUALSWARM_SERVICES_COORDINATOR_SERVICE_WORKER_SERVICE_H_
