// CampaignService (proto/dualswarm/v1/campaign.proto): run templates fired on
// cron schedules (the scheduler that fires them is scheduler.h), named by id
// or name, paused and resumed, and the runs each fired with what changed in
// their findings. Submitters manage campaigns like runs.
#ifndef DUALSWARM_SERVICES_COORDINATOR_SERVICE_CAMPAIGN_SERVICE_H_
#define DUALSWARM_SERVICES_COORDINATOR_SERVICE_CAMPAIGN_SERVICE_H_

#include <string>

#include "dualswarm/v1/campaign.grpc.pb.h"
#include "services/coordinator/service/state.h"

namespace dualswarm::coord {

class CampaignServiceImpl final : public v1::CampaignService::Service {
 public:
  explicit CampaignServiceImpl(ServiceState* state) : state_(state) {}

  grpc::Status Create(grpc::ServerContext* ctx, const v1::CreateCampaignRequest* req, v1::Campaign* resp) override;
  grpc::Status List(grpc::ServerContext* ctx, const v1::ListCampaignsRequest* req,
                    v1::ListCampaignsResponse* resp) override;
  grpc::Status Get(grpc::ServerContext* ctx, const v1::CampaignIdRequest* req, v1::Campaign* resp) override;
  grpc::Status Pause(grpc::ServerContext* ctx, const v1::CampaignIdRequest* req, v1::Campaign* resp) override;
  grpc::Status Resume(grpc::ServerContext* ctx, const v1::CampaignIdRequest* req, v1::Campaign* resp) override;
  grpc::Status Delete(grpc::ServerContext* ctx, const v1::CampaignIdRequest* req,
                      v1::DeleteCampaignResponse* resp) override;
  grpc::Status ListRuns(grpc::ServerContext* ctx, const v1::ListCampaignRunsRequest* req,
                        v1::ListCampaignRunsResponse* resp) override;

 private:
  // The id of the campaign named by id or name.
  absl::StatusOr<int64_t> Resolve(int64_t id, const std::string& name);
  grpc::Status SetPaused(grpc::ServerContext* ctx, const v1::CampaignIdRequest* req, bool paused, v1::Campaign* resp);

  ServiceState* state_;
};

}  // namespace dualswarm::coord

#endif  // DUALSWARM_SERVICES_COORDINATOR_SERVICE_CAMPAIGN_SERVICE_H_
