// Spec coverage for the API (RunService.GetCoverage and
// CampaignService.GetCoverage): the covered branch ids the store united
// over jobs, laid over the branches of the spec version they are of
// (docs/coverage.md).
#ifndef DUALSWARM_SERVICES_COORDINATOR_COVERAGE_REPORT_H_
#define DUALSWARM_SERVICES_COORDINATOR_COVERAGE_REPORT_H_

#include "absl/status/statusor.h"
#include "dualswarm/v1/run.pb.h"
#include "dualswarm/v1/spec.pb.h"
#include "services/coordinator/store/store.h"

namespace dualswarm::coord {

// Every branch of `spec` (which must be the version row.spec_hash names),
// marked covered when row.covered has its id; ids the spec does not have
// are ignored. FAILED_PRECONDITION when the stored source no longer loads.
absl::StatusOr<v1::Coverage> CoverageReport(const v1::Spec& spec, const CoverageRow& row);

}  // namespace dualswarm::coord

#endif  // DUALSWARM_SERVICES_COORDINATOR_COVERAGE_REPORT_H_
