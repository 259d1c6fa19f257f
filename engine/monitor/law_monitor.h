// The judge of an interface's laws (docs/interfaces.md): reads the trace's
// library calls that carry the tester's tag {"law": {"name": N, "run": R,
// "args": [...]}}, groups them into runs (LawRun), and evaluates each run
// as its answers arrive. A run whose calls are not the ones its law makes
// (a rerun that dropped some) is no evidence and is set aside; a run whose
// law's body is false is a violation. Counts per law: runs passed,
// aborted (the `when` condition was false) and violated.
#ifndef DUALSWARM_ENGINE_MONITOR_LAW_MONITOR_H_
#define DUALSWARM_ENGINE_MONITOR_LAW_MONITOR_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "engine/ir/value.h"
#include "engine/lang/interp.h"
#include "engine/lang/spec.h"
#include "engine/monitor/law_run.h"

namespace dualswarm::monitor {

// Most law runs waiting for answers at once (limit: law runs).
inline constexpr size_t kMaxOpenLawRuns = 10'000;

struct LawCounts {
  uint64_t passed = 0;
  uint64_t aborted = 0;
  uint64_t violated = 0;
  uint64_t set_aside = 0;  // calls that were not the law's (reruns)
};

// What a violated run shows.
struct LawViolation {
  const lang::LawDecl* law = nullptr;
  int64_t run = 0;
  std::string why;    // "its body is false" / "'add' raised ..."
  std::string args;   // "s = {...}, x = 3"
  std::string calls;  // LawRun::Describe
};

class LawMonitor {
 public:
  explicit LawMonitor(const lang::Spec* spec) : spec_(spec), interp_(spec) {}
  bool empty() const { return spec_->ast.laws.empty(); }

  // A request sent (label, as sent) and the response to request `label`.
  // Errors: ResourceExhausted naming a bound; FailedPrecondition for spec
  // bugs (a condition that is not a bool).
  absl::Status Sent(int64_t label, const ir::Value& request);
  absl::Status Received(int64_t request_label, const ir::Value& response);

  const LawViolation* violation() const { return violation_ ? &*violation_ : nullptr; }
  const std::map<std::string, LawCounts>& counts() const { return counts_; }

 private:
  struct Open {
    std::unique_ptr<LawRun> run;
    std::vector<int64_t> labels;  // its calls' request labels
  };
  absl::Status Judge(int64_t run_id, Open& open);
  // Drops a run that is no evidence (counted), and ignores its id from now.
  absl::Status SetAside(int64_t run_id);
  void Close(absl::flat_hash_map<int64_t, Open>::iterator it);

  const lang::Spec* spec_;
  lang::Interpreter interp_;
  absl::flat_hash_map<int64_t, Open> runs_;  // open runs by run id
  struct CallOf {
    int64_t run;
    size_t index;
  };
  absl::flat_hash_map<int64_t, CallOf> call_of_label_;  // requests awaiting answers
  // Runs that ended or were set aside: their ids are not reused (one per
  // law run of the trace, so bounded by its requests).
  absl::flat_hash_set<int64_t> set_aside_;
  std::map<std::string, LawCounts> counts_;
  std::optional<LawViolation> violation_;
};

// The law tag of a request ({"law": {...}} fields), when it has a
// well-formed one: law name, run id, parameter values.
struct LawTag {
  std::string name;
  int64_t run = 0;
  std::vector<ir::Value> args;
};
std::optional<LawTag> ReadLawTag(const ir::Value& request);
ir::Value MakeLawTag(const std::string& name, int64_t run, std::vector<ir::Value> args);

}  // namespace dualswarm::monitor

#endif  // DUALSWARM_ENGINE_MONITOR_LAW_MONITOR_H_
