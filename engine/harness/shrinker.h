// Shrinker: makes a failing test input small while it keeps failing the
// same way. First one request at a time, then the requests on each other
// resource (`path` or `key`) than the failing request's dropped at once,
// then delta debugging (ddmin) over the list of (connection, J-expression)
// requests, then per-request simplification (drop headers and fields,
// shorten bodies, move requests to connection 0). Every
// candidate is rerun through a callback (the runner restarts a fresh SUT);
// it is kept only if the rerun reproduces the failure with the same
// signature, retrying flaky candidates. Budgeted in reruns and time;
// the candidates of one step (ddmin's chunks, one request's
// simplifications) may be rerun several at once.
#ifndef DUALSWARM_ENGINE_HARNESS_SHRINKER_H_
#define DUALSWARM_ENGINE_HARNESS_SHRINKER_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/check/observation.h"
#include "engine/harness/counterexample.h"
#include "engine/harness/executor.h"

namespace dualswarm::harness {

// What one rerun of a candidate input produced.
struct RerunOutcome {
  bool reproduced = false;      // failed with the same signature
  std::vector<InputItem> sent;  // the requests actually sent (a prefix)
  std::vector<check::Observation> trace;
  Verdict verdict;
  int round = 0;  // of an input sent several times over: where it failed (repetition.h)
  // An intermediary's run: the origin answers it gave (executor.h).
  std::vector<OriginAnswerItem> origin_answers;
};

using RerunFn = std::function<absl::StatusOr<RerunOutcome>(const std::vector<InputItem>&)>;

// Where shrinking is, for progress lines: reruns started so far and how
// many of those finished failed the same way (a candidate that dropped what
// the failure needs does not, however deterministic the failure), the
// current input's size, and whether the failure has shown itself flaky
// (some candidate both reproduced and did not); after shrinking, the
// verification replays done and how many reproduced.
struct ShrinkProgress {
  int reruns = 0;
  int reproduced = 0;
  size_t size = 0;
  bool flaky = false;
  int replays = 0;  // verification replays done (0: still shrinking)
  int replays_reproduced = 0;
  int replays_planned = 0;
};

struct ShrinkOptions {
  int max_reruns = 300;
  double max_seconds = 60;
  // A candidate may fail to reproduce this often before it is discarded,
  // once the failure has shown itself flaky (some candidate both reproduced
  // and did not, or `flaky`); until then one failed rerun discards it. With
  // confirm 1 no candidate can show it, so attempts applies from the start.
  int attempts = 2;
  int confirm = 2;  // ... and must reproduce this often to be kept (reliable replays)
  // Known flaky from an earlier pass (ShrinkResult::seen_flaky).
  bool flaky = false;
  // Candidates rerun at once (each on its own fresh SUT; the rerun callback
  // must allow that when jobs > 1). The result does not depend on it when
  // reruns are deterministic: the first reproducing candidate in order wins.
  int jobs = 1;
  // Seconds since shrinking started (the caller owns the clock).
  std::function<double()> elapsed;
  // Called after every rerun (one call at a time).
  std::function<void(const ShrinkProgress&)> on_progress;
};

struct ShrinkResult {
  std::vector<InputItem> input;
  RerunOutcome last;  // the last reproducing run of `input`
  int reruns = 0;
  int reproduced = 0;       // reruns that reproduced the failure
  bool complete = false;    // false when a budget stopped it
  bool seen_flaky = false;  // some candidate both reproduced and did not (or ShrinkOptions::flaky)
};

// `input` sent one request at a time: each waits for the previous response.
std::vector<InputItem> OneAtATime(const std::vector<InputItem>& input);
// `input` one request at a time in the order their responses arrived in
// `trace` (a run of `input`): a server that acts on a request when it
// answers it (a cache stores what it relays) then meets the requests in
// the order the run's effects happened, which the order they were sent in
// need not be. A request with no response (never answered, a fault) stays
// right behind the request before it; references move with the messages
// they name. Equal to OneAtATime(input) when the orders agree.
std::vector<InputItem> InResponseOrder(const std::vector<InputItem>& input,
                                       const std::vector<check::Observation>& trace);
// Whether some request of `input` may be sent before the previous one's
// response arrived (its `after` lacks the request before it).
bool Overlapping(const std::vector<InputItem>& input);

// Request k (0-based) of an input has label 2k+1 and its response 2k+2.
// `jexpr`'s references to the messages of the request at old position p
// move to new_pos[p] (-1: dropped; such references stay as they were and
// are then resolved loosely).
ir::Value RelabelRefs(const ir::Value& jexpr, const std::vector<int>& new_pos);
// `input` without the requests `drop` marks. A wait for a dropped request
// becomes a wait for the last kept request before it, so sequential chains
// stay sequential; references move with the messages they name.
std::vector<InputItem> Without(const std::vector<InputItem>& input, const std::vector<bool>& drop);
// What a request acts on: its `path` (HTTP) or `key` (kv stores), "" when
// it names neither.
std::string ResourceOf(const InputItem& item);

// `failing` is the input of the original failing run and `original` that
// run's outcome. Errors from the rerun callback abort shrinking.
absl::StatusOr<ShrinkResult> Shrink(const std::vector<InputItem>& failing, const RerunOutcome& original,
                                    const RerunFn& rerun, const ShrinkOptions& options);

}  // namespace dualswarm::harness

#endif  // DUALSWARM_ENGINE_HARNESS_SHRINKER_H_
