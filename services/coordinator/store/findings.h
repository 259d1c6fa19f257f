// The finding steps of a job's completion, internal to the store
// (store/*.cc; job_queue.cc calls them from CompleteJob): checking the
// counterexample a failed job reports, and recording it in its finding
// group (one per spec version, target and signature) with the group's
// count and smallest counterexample kept up to date.
#ifndef DUALSWARM_SERVICES_COORDINATOR_STORE_FINDINGS_H_
#define DUALSWARM_SERVICES_COORDINATOR_STORE_FINDINGS_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "services/coordinator/store/sql.h"
#include "services/coordinator/store/store.h"

namespace dualswarm::coord {

// The counterexample of a completion with outcome FAILED, as it will be
// stored (NULs scrubbed), or INVALID_ARGUMENT: none reported, an unknown
// kind, no signature, or beyond the size limits.
absl::StatusOr<NewCounterexample> CheckCounterexample(const Completion& c);

// Where a counterexample was found: its job, the lease that reported it,
// and the run's spec version and target.
struct FoundIn {
  int64_t run_id = 0;
  int64_t job_id = 0;
  std::string lease_token;
  std::string spec_hash;
  int64_t target_id = 0;
};

// Adds `cx` to its finding group (created on first sight), in the caller's
// transaction.
void RecordCounterexample(Sql& w, const FoundIn& where, const NewCounterexample& cx);

}  // namespace dualswarm::coord

#endif  // DUALSWARM_SERVICES_COORDINATOR_STORE_FINDINGS_H_
