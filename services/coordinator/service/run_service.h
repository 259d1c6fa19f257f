// RunService (proto/dualswarm/v1/run.proto): runs submitted (a swarm of jobs
// from a template, named after its submitter), read, listed, cancelled and
// watched (a stream of the run as it changes, polled every watch_poll_ms,
// ending when the run is final), and a run's jobs listed.
#ifndef DUALSWARM_SERVICES_COORDINATOR_SERVICE_RUN_SERVICE_H_
#define DUALSWARM_SERVICES_COORDINATOR_SERVICE_RUN_SERVICE_H_

#include "dualswarm/v1/run.grpc.pb.h"
#include "services/coordinator/service/state.h"

namespace dualswarm::coord {

class RunServiceImpl final : public v1::RunService::Service {
 public:
  explicit RunServiceImpl(ServiceState* state) : state_(state) {}

  grpc::Status Submit(grpc::ServerContext* ctx, const v1::SubmitRunRequest* req, v1::Run* resp) override;
  grpc::Status Get(grpc::ServerContext* ctx, const v1::GetRunRequest* req, v1::Run* resp) override;
  grpc::Status List(grpc::ServerContext* ctx, const v1::ListRunsRequest* req, v1::ListRunsResponse* resp) override;
  grpc::Status Cancel(grpc::ServerContext* ctx, const v1::CancelRunRequest* req, v1::Run* resp) override;
  grpc::Status Watch(grpc::ServerContext* ctx, const v1::WatchRunRequest* req,
                     grpc::ServerWriter<v1::RunEvent>* writer) override;
  grpc::Status ListJobs(grpc::ServerContext* ctx, const v1::ListJobsRequest* req, v1::ListJobsResponse* resp) override;

 private:
  ServiceState* state_;
};

}  // namespace dualswarm::coord

#endif  // DUALSWARM_SERVICES_COORDINATOR_SERVICE_RUN_SERVICE_H_
