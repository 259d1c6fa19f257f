// The store's size and range limits, in one place: what a request may ask
// for and how much text a row may hold. The store refuses anything beyond
// them with INVALID_ARGUMENT; the service layer checks some of them earlier
// (kMaxLeaseBatch) with the same numbers. Changing one changes what clients
// may send, so the docs (docs/coordinator.md) and the CLI's checks follow.
#ifndef DUALSWARM_SERVICES_COORDINATOR_STORE_LIMITS_H_
#define DUALSWARM_SERVICES_COORDINATOR_STORE_LIMITS_H_

#include <cstddef>
#include <cstdint>

#include "engine/harness/coverage_guide.h"
#include "workers/adapters/origin_listener.h"
#include "workers/sut/cluster.h"

namespace dualswarm::coord {

// --- runs and the job queue ---
inline constexpr int kMaxJobsPerRun = 100000;
inline constexpr int kMaxLeaseBatch = 256;                  // jobs in one LeaseJobs
inline constexpr int64_t kMinLeaseMs = 100;                 // a lease's length (LeaseJobs, Heartbeat)
inline constexpr int64_t kMaxLeaseMs = 24LL * 3600 * 1000;  // one day
inline constexpr size_t kMaxHeartbeatJobs = 1024;           // leases extended by one Heartbeat
inline constexpr size_t kMaxLeaseTokenBytes = 64;

// A completion's covered spec branches (docs/coverage.md): ids strictly
// increasing, each below this (a spec's source is at most 1 MiB, and every
// branch takes bytes of it).
inline constexpr int32_t kMaxBranchId = 1 << 20;
inline constexpr size_t kMaxCoveredBranches = 65536;  // ids in one completion

// --- a run's budget (JobBudget): defaults for 0 and the largest values ---
inline constexpr int kDefaultSteps = 1000;
inline constexpr int kDefaultConnections = 4;
inline constexpr int kDefaultMaxInFlight = 4;
inline constexpr int kDefaultResponseTimeoutMs = 5000;
inline constexpr uint64_t kMaxSteps = 1'000'000'000;
inline constexpr int64_t kMaxTimeBudgetMs = 7LL * 24 * 3600 * 1000;  // one week
inline constexpr int kMaxConnections = 256;
inline constexpr int kMaxInFlight = 1024;
inline constexpr int64_t kMaxResponseTimeoutMs = 3600 * 1000;  // one hour
inline constexpr uint64_t kMaxFrontier = uint64_t{1} << 40;
inline constexpr int kMaxGuideCandidates = harness::kMaxGuideCandidates;  // the engine's bound
// Explore runs (JobBudget::explore_depth > 0): the depth bound, the states
// a job keeps, and its wall time when the budget names none.
inline constexpr int kMaxExploreDepth = 64;
inline constexpr uint64_t kDefaultExploreMaxStates = 200'000;
inline constexpr uint64_t kMaxExploreMaxStates = 2'000'000;  // each kept as its text: memory
inline constexpr int64_t kDefaultExploreTimeMs = 60'000;
// The built-in target explore runs are against: it starts no SUT, and no
// user can register a target of its name (the adapter word also tells
// workers that can explore: their --adapters list it).
inline constexpr char kExploreTarget[] = "explore";

// --- names and text ---
// Names chosen by clients that travel in URLs and lists (targets,
// campaigns, gen blocks, labels, adapters): 1-64 characters.
inline constexpr size_t kMaxIdentifierBytes = 64;
inline constexpr size_t kMaxListItems = 64;  // labels or adapters of one target/worker
// Free-form names and ids stored as given: spec names, worker names, ids and
// versions, token names, and the tokens themselves.
inline constexpr size_t kMaxNameBytes = 200;
inline constexpr size_t kMaxSignatureBytes = 200;  // a counterexample's signature
inline constexpr size_t kMaxLaunchBytes = 4096;    // a target's launch command
// A counterexample's input, trace and document together.
inline constexpr size_t kMaxCounterexampleBytes = size_t{8} << 20;

// --- targets and workers ---
inline constexpr int kDefaultReadinessTimeoutMs = 10000;
inline constexpr int kMaxReadinessTimeoutMs = 600000;  // ten minutes
inline constexpr int kMaxWorkerSlots = 256;
// A grpc target's descriptor set: it travels with every job leased for the
// target, so it is kept well below the adapter's own 16 MiB.
inline constexpr size_t kMaxTargetDescriptorSetBytes = size_t{1} << 20;
// A cluster target's nodes: as many as a worker's launcher starts
// (migration 8's CHECK spells the number out).
inline constexpr int kMaxTargetNodes = workers::kMaxClusterNodes;
// A cluster target's nemesis: its fault list and timing (migration 9's
// CHECKs spell the numbers out).
inline constexpr size_t kMaxNemesisBytes = 64;
inline constexpr int64_t kMaxFaultTimingMs = 3'600'000;  // one hour
// An intermediary target's origin endpoints: as many as the tester's origin
// listener binds (migration 10's CHECK spells the number out).
inline constexpr int kMaxTargetOrigins = workers::kMaxOriginEndpoints;
// An fs target's user to run the program as: a POSIX-portable login name
// (migration 11's CHECK spells the pattern out).
inline constexpr size_t kMaxRunAsBytes = 32;
// A launched target's reset command (migration 12's CHECK spells it out).
inline constexpr size_t kMaxResetCommandBytes = 4096;

// --- listings ---
inline constexpr int kDefaultPageSize = 50;
inline constexpr int kMaxPageSize = 500;
inline constexpr int kDefaultCounterexamples = 10;  // ListCounterexamples' limit when 0
inline constexpr int kMaxCounterexamples = 100;

}  // namespace dualswarm::coord

#endif  // DUALSWARM_SERVICES_COORDINATOR_STORE_LIMITS_H_
