#include "services/coordinator/services.h"

#include <iostream>

#include "services/coordinator/service/grpc_services.h"
#include "services/coordinator/service/state.h"

namespace dualswarm::coord {

struct CoordinatorServices::Impl {
  Impl(Store* store, ServiceOptions options) : state(store, options) {
    for (auto make : {MakeSpecService, MakeTargetService, MakeRunService, MakeFindingService, MakeWorkerService,
                      MakeCampaignService})
      services.push_back(make(&state));
  }

  ServiceState state;  // first: the services below point at it
  std::vector<std::unique_ptr<grpc::Service>> services;
};

CoordinatorServices::CoordinatorServices(Store* store, ServiceOptions options)
    : impl_(std::make_unique<Impl>(store, options)) {}

CoordinatorServices::~CoordinatorServices() = default;

std::vector<grpc::Service*> CoordinatorServices::services() {
  std::vector<grpc::Service*> out;
  for (const auto& service : impl_->services) out.push_back(service.get());
  return out;
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
