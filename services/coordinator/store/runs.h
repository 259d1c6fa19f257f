// Run steps other store files share, internal to the store (store/*.cc):
// inserting a run with its swarm (Store::SubmitRun, and campaigns when they
// fire) and bringing a run's state in line with its jobs (the job queue,
// cancellation). All run inside the caller's transaction.
#ifndef DUALSWARM_SERVICES_COORDINATOR_STORE_RUNS_H_
#define DUALSWARM_SERVICES_COORDINATOR_STORE_RUNS_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "services/coordinator/store/sql.h"
#include "services/coordinator/store/store.h"

namespace dualswarm::coord {

// Queued and running runs may still change; every other state is final.
bool RunIsOpen(v1::RunState s);

// A random run seed (never 0, which means "pick one").
uint64_t RandomSeed();

// The spec version's gen check for a run: NOT_FOUND for an unknown version;
// INVALID_ARGUMENT naming the spec's gen blocks when `gen` is not one of
// them (unchecked for versions stored before the spec's gens were recorded).
absl::Status CheckGen(Sql& w, const std::string& spec_hash, const std::string& gen);

// NOT_FOUND unless target `id` exists; INVALID_ARGUMENT for the built-in
// target of explore runs (a testing run cannot use it).
absl::Status CheckTargetExists(Sql& w, int64_t id);
// InvalidArgument when the spec version has an origin role and the target
// no origins, or the reverse (a version whose role is unknown: OK).
absl::Status CheckOriginRole(Sql& w, const std::string& spec_hash, int64_t target_id);
// The id of the built-in target explore runs are against (kExploreTarget,
// made on first use); INVALID_ARGUMENT when `requested` is neither 0 nor it.
absl::StatusOr<int64_t> ExploreTargetFor(Sql& w, int64_t requested);
// INVALID_ARGUMENT when the spec version cannot be explored (an
// intermediary's: explore does not model the origin side).
absl::Status CheckExplorable(Sql& w, const std::string& spec_hash);

// Inserts a validated run (ValidateTemplate, seed set) with its swarm of
// jobs. NOT_FOUND (nothing written) for an unknown spec version or target.
absl::StatusOr<RunRow> InsertRun(Sql& w, const RunTemplate& t, const std::string& submitted_by, int64_t campaign_id);

// Brings a run's state in line with its jobs; the caller holds the run's
// row lock (runs.cc says why that is enough).
void RefreshRun(Sql& w, int64_t run_id);

}  // namespace dualswarm::coord

#endif  // DUALSWARM_SERVICES_COORDINATOR_STORE_RUNS_H_
