// Counterexamples: everything needed to understand and replay a failure —
// spec identity, target, swarm parameters, the (shrunk) test input as
// J-expressions, the concrete trace of the last failing run, the verdict,
// and a signature that groups failures with the same cause. Serialised as
// JSON (docs/counterexample.md) and drawn as a terminal sequence diagram.
#ifndef DUALSWARM_ENGINE_HARNESS_COUNTEREXAMPLE_H_
#define DUALSWARM_ENGINE_HARNESS_COUNTEREXAMPLE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/check/observation.h"
#include "engine/harness/executor.h"

namespace dualswarm::harness {

struct Verdict {
  std::string kind;                    // safety | liveness | spec-error | sut-crash | property
  std::string reason;                  // human-readable
  std::string field;                   // mismatching field path (safety), e.g. "status"
  std::string spec_loc;                // the `send` the primary dying explanation expected (file:line:col)
  std::vector<std::string> spec_locs;  // every `send` the dying explanations expected
  int64_t label = 0;                   // the rejected response / the overdue request
  bool origin_side = false;            // the rejected message is a request the SUT sent the origin
  std::vector<std::string> details;    // why each remaining explanation died
};

// Most rounds a counterexample may ask for, and most requests its rounds
// may add up to (bounds on untrusted input: `repeat` in a counterexample
// file; repetition.h).
constexpr int kMaxRepeat = 10000;
constexpr int64_t kMaxRepeatedItems = 1'000'000;

struct Counterexample {
  std::string spec_name;
  std::string spec_hash;
  std::string spec_file;
  std::string target;  // launch command template or HOST:PORT
  std::string adapter;
  uint64_t seed = 0;
  std::string branch_order = "first";
  std::string feature_mask;
  int connections = 1;
  int max_in_flight = 1;
  int max_per_connection = 0;  // outstanding requests per connection (0: no limit but max_in_flight)
  int64_t response_timeout_ms = 5000;
  int nodes = 1;           // a launched cluster's nodes (workers/sut/cluster.h)
  int connect_node = -1;   // the node every connection talks to; -1 round-robin
  int origins = 0;         // an intermediary's origin endpoints (0: none; workers/runner/runner.h)
  std::string origin_gen;  // the origin gen that answered ("": the spec's only one, or `answer`)
  // The nemesis's faults (none: empty) and its timing, as the job ran.
  std::vector<std::string> nemesis_faults;
  int64_t nemesis_interval_ms = 1000;
  int64_t nemesis_duration_ms = 300;
  std::vector<InputItem> input;  // shrunk test input
  // Rounds the input is sent in (repetition.h): a rare race's core is
  // sent this many times over in one run; 1 for any other.
  int repeat = 1;
  int failed_round = 0;  // the round (from 0) in which `trace` failed
  // An intermediary's: the answers the tester gave as the origin, which a
  // replay gives again (origin_answers.h).
  std::vector<OriginAnswerItem> origin_answers;
  std::vector<check::Observation> trace;  // last failing run
  Verdict verdict;
  std::string signature;     // 16 hex digits
  size_t original_size = 0;  // requests before shrinking
  size_t shrunk_size = 0;    // requests after shrinking
  int shrink_reruns = 0;
  double shrink_seconds = 0;
  bool shrink_complete = false;  // false when a budget ended it
  int replays_verified = 0;      // replays of the shrunk input after shrinking
  int replays_reproduced = 0;    // ... that reproduced the signature
};

// The class of a failure: kind + the failing request's method/op + a
// summary of the answer (HTTP status or field names). Shrinking keeps a
// candidate when its failure has the same class, so it may simplify
// headers and payloads away.
std::string FailureClass(const Verdict& v, const std::vector<check::Observation>& trace);
// The signature findings are grouped by: the failure class plus, for
// safety, the spec `send` the primary dying explanation expected, plus the
// names of the faults in the trace (none: nothing added).
// Stable across reruns and machines; never includes ETag values,
// timestamps, labels or seeds.
std::string ComputeSignature(const Verdict& v, const std::vector<check::Observation>& trace);

std::string CounterexampleToJson(const Counterexample& cx);
absl::StatusOr<Counterexample> CounterexampleFromJson(absl::string_view text);

// One lane per connection, an arrow per message with its label, the
// failing message marked, the reason underneath.
std::string RenderSequenceDiagram(const Counterexample& cx);

}  // namespace dualswarm::harness

#endif  // DUALSWARM_ENGINE_HARNESS_COUNTEREXAMPLE_H_
