// Runner: runs one test job end to end — launches (or connects to) the SUT,
// drives the executor through an adapter, enforces the budgets (steps, wall
// time, response timeout) and classifies the outcome. Used by `dualswarm
// test` and `dualswarm replay`, by shrinking (shrink_job.h: every rerun is a
// RunJob), and by the worker's job process (workers/daemon/job_child.h),
// where the daemon also enforces the time budget from outside: a job child
// still running past budget + grace is killed (workers/daemon/job_process.h).
#ifndef DUALSWARM_WORKERS_RUNNER_RUNNER_H_
#define DUALSWARM_WORKERS_RUNNER_RUNNER_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/harness/executor.h"
#include "workers/adapters/adapter.h"
#include "workers/runner/nemesis.h"

namespace dualswarm::workers {

struct JobProgress {
  uint64_t sent = 0;
  uint64_t received = 0;
  double seconds = 0;
  size_t frontier = 0;
  uint64_t steps_budget = 0;
};

class SutReaper;  // workers/sut/sut_reaper.h
class WarmSuts;   // workers/sut/warm_suts.h
class SpareSuts;  // workers/sut/spare_suts.h
struct SpareLaunch;

struct JobOptions {
  harness::ExecutorOptions exec;
  std::string adapter = "http";
  AdapterConfig adapter_config;  // the grpc adapter's descriptor set
  std::string target;            // "HOST:PORT" of a running SUT, or
  std::string launch;            // a command template with {port} and {dir}
  // A launched SUT's nodes (workers/sut/cluster.h: each from `launch`, with
  // {node}, {peer_port}, {peers}, ...), and the node every connection
  // talks to: -1 = connection c to node c mod nodes (round-robin).
  int nodes = 1;
  int connect_node = -1;
  // Faults injected into the launched nodes while the job runs, from the
  // seed (nemesis.h); none by default.
  NemesisOptions nemesis;
  // An intermediary's spec (one with an origin role): how many origin
  // endpoints the tester listens on (origin_listener.h), named in the
  // launch template as {origin_port} (endpoint 0) and {origin_port_K};
  // 0 for any other spec. Requests on them are framed like the clients'
  // (the adapter's codec; jsonl only, for now).
  int origins = 0;
  // Longest an origin answer {"abort": "silence"} lasts: the tester then
  // closes the connection (the SUT had that long to give up by itself).
  int64_t origin_silence_ms = 10000;
  int64_t response_timeout_ms = 5000;
  double time_budget_s = 0;  // 0: no wall-time budget
  int ready_timeout_ms = 10000;
  std::string ready_probe = "tcp";  // when a launched SUT is ready: "tcp" or "http:/PATH" (util/ready_probe.h)
  std::string work_root = "/tmp";   // launched SUTs get a fresh directory under this
  std::function<void(const JobProgress&)> on_progress;  // about once a second
  // When set and true, the job stops at once: the SUT is torn down and
  // RunJob returns Cancelled.
  const std::atomic<bool>* cancel = nullptr;
  // Not owned; when set, a launched SUT is handed to it at the end of the
  // job and stopped in the background (shrinking reruns: sut_reaper.h)
  // instead of before RunJob returns.
  SutReaper* sut_reaper = nullptr;
  // Not owned; when set, the job takes a running SUT from it, reset by
  // the target's reset command, instead of launching one, and gives its
  // SUT back at the end (shrinking reruns: warm_suts.h). Not for jobs
  // with origins or a nemesis, which always launch fresh.
  WarmSuts* warm_suts = nullptr;
  // Not owned; when set (and no running SUT was taken from warm_suts), the
  // job takes a fresh SUT launched ahead of need (shrinking reruns:
  // spare_suts.h) when it was launched as this job would launch its own.
  SpareSuts* spare_suts = nullptr;
};

// kProperty: a `property` of the spec is violated (engine/monitor), the
// verdict names it.
enum class Outcome { kPassed, kSafety, kLiveness, kSpecError, kSutCrash, kInconclusive, kProperty };
const char* OutcomeName(Outcome o);  // passed | safety | liveness | spec-error | sut-crash | inconclusive | property
// Whether the SUT is at fault: a safety, liveness or property violation or
// a crash (what shrinking reduces and `dualswarm test` exits 1 for).
bool IsSutFault(Outcome o);

struct JobResult {
  Outcome outcome = Outcome::kPassed;
  std::string reason;                                     // one paragraph for humans
  check::Verdict verdict;                                 // the checker's verdict (safety rejections)
  std::vector<check::Observation> trace;                  // everything observed
  std::vector<harness::InputItem> inputs;                 // the test input (J-expressions)
  std::vector<harness::OriginAnswerItem> origin_answers;  // what the tester answered as the origin
  check::CheckerStats stats;
  // A library interface's run (docs/interfaces.md): its pools at the end.
  std::optional<harness::SignatureStats> signature;
  // The spec's branches (lang/branches.h) the run covered, sorted: taken
  // by a generated request or by the checker's explanation of the trace.
  std::vector<int32_t> covered_branches;
  double seconds = 0;
  uint64_t sent = 0, received = 0;
  int faults = 0;             // faults the nemesis injected (heals not counted)
  uint64_t given_up = 0;      // requests the tester gave up on near faults (timeout events)
  int64_t overdue_label = 0;  // liveness: the unanswered request
};

// Errors (not outcomes): bad options, a SUT that cannot be started.
absl::StatusOr<JobResult> RunJob(std::shared_ptr<const lang::Spec> spec, const JobOptions& options);

// How `o` launches its SUT, for spares launched ahead of its reruns
// (spare_suts.h); nullopt when it cannot take spares: it runs against a
// target, its launch names ports of its own origin listener, it runs a
// program per operation (adapter fs), or it is a cluster or has faults
// (timed from their launch).
std::optional<SpareLaunch> SpareLaunchFor(const JobOptions& o);

}  // namespace dualswarm::workers

#endif  // DUALSWARM_WORKERS_RUNNER_RUNNER_H_
