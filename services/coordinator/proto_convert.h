// Store rows (services/coordinator/store/store.h) <-> the API's messages
// (proto/dualswarm/v1): one function per message and direction, used by the
// gRPC services (services/coordinator/service/) and nothing else. Enum values
// travel as the words of proto/names/wire_names.h, the module the worker and
// the CLI share. Optional timestamps (a run's start, a campaign's
// next fire time) stay unset while the row has 0, so a client never sees
// 1970-01-01.
#ifndef DUALSWARM_SERVICES_COORDINATOR_PROTO_CONVERT_H_
#define DUALSWARM_SERVICES_COORDINATOR_PROTO_CONVERT_H_

#include <google/protobuf/timestamp.pb.h>

#include "dualswarm/v1/campaign.pb.h"
#include "dualswarm/v1/finding.pb.h"
#include "dualswarm/v1/run.pb.h"
#include "dualswarm/v1/spec.pb.h"
#include "dualswarm/v1/target.pb.h"
#include "dualswarm/v1/worker.pb.h"
#include "services/coordinator/store/store.h"

namespace dualswarm::coord {

namespace v1 = ::dualswarm::v1;

// Microseconds since the epoch -> Timestamp; 0 leaves `ts` as it is (but
// a mutable_*() argument has already made the field present: callers of
// optional times test for 0 first).
void SetTime(Micros us, google::protobuf::Timestamp* ts);
Micros NowMicros();

void SpecToProto(const SpecRow& s, v1::Spec* p);
void TargetToProto(const TargetRow& t, v1::Target* p);
TargetRow TargetFromProto(const v1::Target& p);
void BudgetToProto(const JobBudget& b, v1::JobBudget* p);
JobBudget BudgetFromProto(const v1::JobBudget& p);
void TemplateToProto(const RunTemplate& t, v1::RunTemplate* p);
RunTemplate TemplateFromProto(const v1::RunTemplate& p);
void CampaignToProto(const CampaignRow& c, v1::Campaign* p);
CampaignRow CampaignFromProto(const v1::Campaign& p);
void RunToProto(const RunRow& r, v1::Run* p);
void CampaignRunToProto(const CampaignRunRow& r, v1::CampaignRun* p);
void JobToProto(const JobRow& j, v1::Job* p);
void FindingToProto(const FindingRow& f, v1::Finding* p);
void CounterexampleToProto(const CounterexampleRow& c, v1::Counterexample* p);
// What a worker reports; kind is UNSPECIFIED when the message has none.
NewCounterexample CounterexampleFromProto(const v1::Counterexample& p);
WorkerInfo WorkerFromProto(const v1::RegisterWorkerRequest& p);
// A leased job as the worker receives it, without its spec and target
// (the service fills those from its caches).
void LeasedJobToProto(const LeasedJob& lj, v1::LeasedJob* p);

}  // namespace dualswarm::coord

#endif  // DUALSWARM_SERVICES_COORDINATOR_PROTO_CONVERT_H_
