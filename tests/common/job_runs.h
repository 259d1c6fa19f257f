// Test helper for tests that run one job in-process (workers::RunJob)
// against a launched system under test: the job options most of them use
// (for a server, or an intermediary), a readable account of a result for
// assertion messages (outcome, reason, the last 12 observations, and the
// rejection when there is one), the counterexample a run saved, and counts
// over an intermediary's trace. Header-only.
#ifndef DUALSWARM_TESTS_COMMON_JOB_RUNS_H_
#define DUALSWARM_TESTS_COMMON_JOB_RUNS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/check/checker.h"
#include "engine/check/observation.h"
#include "engine/harness/counterexample.h"
#include "util/file_tail.h"
#include "workers/runner/runner.h"
#include "workers/runner/shrink_job.h"

namespace dualswarm::testing {

// Shrinking a finding against a deterministic program (an fs target):
// a budget of `reruns` makes the result the same on a busy machine as on
// an idle one (50 s is only a backstop); two candidates at a time; 3
// verification replays.
inline workers::ShrinkJobOptions DeterministicShrink(int reruns) {
  workers::ShrinkJobOptions so;
  so.max_reruns = reruns;
  so.max_seconds = 50;
  so.jobs = 2;
  so.verify = 3;
  return so;
}

// `steps` requests over 4 connections with 4 in flight, from `seed`.
inline workers::JobOptions JobOptionsFor(const std::string& launch, const std::string& adapter, uint64_t seed,
                                         uint64_t steps) {
  workers::JobOptions o;
  o.launch = launch;
  o.adapter = adapter;
  o.exec.seed = seed;
  o.exec.steps = steps;
  o.exec.connections = 4;
  o.exec.max_in_flight = 4;
  return o;
}

// The same for an intermediary: the tester also plays one origin.
inline workers::JobOptions IntermediaryJobOptionsFor(const std::string& launch, const std::string& adapter,
                                                     uint64_t seed, uint64_t steps) {
  workers::JobOptions o = JobOptionsFor(launch, adapter, seed, steps);
  o.origins = 1;
  return o;
}

// An intermediary's trace: how often the tester, as the origin, answered
// {"abort": kind}, and how many responses the clients got with a status in
// [lo, hi].
inline size_t OriginAborts(const std::vector<check::Observation>& trace, const std::string& kind) {
  size_t n = 0;
  for (const check::Observation& ob : trace) {
    const ir::Value* abort = ob.side == check::Side::kOrigin ? ob.msg.Find("abort") : nullptr;
    n += abort != nullptr && abort->is_string() && abort->as_string() == kind;
  }
  return n;
}
inline size_t ClientStatuses(const std::vector<check::Observation>& trace, int64_t lo, int64_t hi) {
  size_t n = 0;
  for (const check::Observation& ob : trace) {
    if (ob.side != check::Side::kClient || ob.kind != check::Observation::Kind::kReceived) continue;
    const ir::Value* status = ob.msg.Find("status");
    n += status != nullptr && status->is_int() && status->as_int() >= lo && status->as_int() <= hi;
  }
  return n;
}

// The counterexample `dualswarm test --save` wrote to `path`.
inline absl::StatusOr<harness::Counterexample> ReadSavedCounterexample(const std::string& path) {
  absl::StatusOr<std::string> saved = util::ReadFileTail(path, 1 << 20);
  if (!saved.ok()) return saved.status();
  return harness::CounterexampleFromJson(*saved);
}

// How the `run` requests of an fs job's trace ended: exit status 0, or
// another exit status (a synchronizer's conflict or failure).
struct FsRuns {
  size_t clean = 0, not_clean = 0;
};
inline FsRuns FsRunsOf(const std::vector<check::Observation>& trace) {
  FsRuns r;
  for (const check::Observation& o : trace) {
    const ir::Value* exit = o.kind == check::Observation::Kind::kReceived ? o.msg.Find("exit") : nullptr;
    if (exit != nullptr && exit->is_int()) (exit->as_int() == 0 ? r.clean : r.not_clean)++;
  }
  return r;
}

inline std::string DescribeJobResult(const workers::JobResult& r) {
  std::string s = absl::StrCat(workers::OutcomeName(r.outcome), ": ", r.reason, "\n");
  size_t from = r.trace.size() > 12 ? r.trace.size() - 12 : 0;
  for (size_t i = from; i < r.trace.size(); ++i) absl::StrAppend(&s, check::ObservationToJson(r.trace[i]), "\n");
  if (r.verdict.kind == check::Verdict::Kind::kReject) s += check::FormatVerdict(r.verdict);
  return s;
}

}  // namespace dualswarm::testing

#endif  // DUALSWARM_TESTS_COMMON_JOB_RUNS_H_
