#include "services/coordinator/services.h"

#include <iostream>

#include "services/coordinator/service/campaign_service.h"
#include "services/coordinator/service/finding_service.h"
#include "services/coordinator/service/run_service.h"
#include "services/coordinator/service/spec_service.h"
#include "services/coordinator/service/state.h"
#include "services/coordinator/service/target_service.h"
#include "services/coordinator/service/worker_service.h"

namespace dualswarm::coord {

struct CoordinatorServices::Impl {
  Impl(Store* store, ServiceOptions options)
      : state(store, options),
        specs(&state),
        targets(&state),
        runs(&state),
        findings(&state),
        workers(&state),
        campaigns(&state) {}

  ServiceState state;  // first: the services below point at it
  SpecServiceImpl specs;
  TargetServiceImpl targets;
  RunServiceImpl runs;
  FindingServiceImpl findings;
  WorkerServiceImpl workers;
  CampaignServiceImpl campaigns;
};

CoordinatorServices::CoordinatorServices(Store* store, ServiceOptions options)
    : impl_(std::make_unique<Impl>(store, options)) {}

CoordinatorServices::~CoordinatorServices() = default;

std::vector<grpc::Service*> CoordinatorServices::services() {
  return {&impl_->specs, &impl_->targets, &impl_->runs, &impl_->findings, &impl_->workers, &impl_->campaigns};
}

std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface> CoordinatorServices::AuthInterceptor() {
  return impl_->state.auth().Interceptor();
}

void CoordinatorServices::NotifyJobsAvailable() { impl_->state.Wake(); }

void CoordinatorServices::Shutdown() {
  impl_->state.StopWaiting();
  // Held jobs go back to the queue (if the database is down they expire).
  if (auto st = impl_->state.lease_pool().Close(); !st.ok())
    std::cerr << "dualswarm-coordinator: returning held leases: " << st.message() << "\n";
}

}  // namespace dualswarm::coord
