// TraceValidator: checks the label / connection discipline of a trace (a
// label is used once, a response answers the oldest request outstanding on
// its connection, a timeout names an outstanding request) and maps
// connections to channels: a channel is one connection between two
// `closed` events, so a reused connection number is a new channel.
#ifndef DUALSWARM_ENGINE_CHECK_TRACE_VALIDATOR_H_
#define DUALSWARM_ENGINE_CHECK_TRACE_VALIDATOR_H_

#include <cstdint>
#include <deque>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/check/observation.h"

namespace dualswarm::check {

class TraceValidator {
 public:
  // Returns the observation's channel (-1 when it has none), or
  // InvalidArgument "line N: ..." when the observation breaks the rules.
  absl::StatusOr<int> Accept(const Observation& o);
  // Whether `conn` is open (has a channel).
  bool IsOpen(int64_t conn) const { return conn_channel_.count(conn) > 0; }

 private:
  std::unordered_map<int64_t, int> conn_channel_;
  std::vector<std::deque<int64_t>> unanswered_;  // per channel
  std::unordered_set<int64_t> labels_;
};

}  // namespace dualswarm::check

#endif  // DUALSWARM_ENGINE_CHECK_TRACE_VALIDATOR_H_
