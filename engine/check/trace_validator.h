// TraceValidator: checks the label / connection discipline of a trace (a
// label is used once, a response answers the oldest request outstanding on
// its connection, a timeout names an outstanding request) and maps
// connections to channels: a channel is one connection between two
// `closed` events, so a reused connection number is a new channel. The two
// sides of an intermediary's trace (observation.h) have their own
// connections and labels; their channels are numbered together.
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
  // Whether the clients' side connection `conn` is open (has a channel).
  bool IsOpen(int64_t conn) const { return conn_channel_.count(ConnKey(Side::kClient, conn)) > 0; }

 private:
  // A side's connection as one key (connections are below 2^32).
  static int64_t ConnKey(Side side, int64_t conn) { return side == Side::kOrigin ? conn | (int64_t{1} << 32) : conn; }
  absl::StatusOr<int> OpenRequest(const Observation& o);
  absl::StatusOr<int> Answer(const Observation& o);

  std::unordered_map<int64_t, int> conn_channel_;  // by ConnKey
  std::vector<std::deque<int64_t>> unanswered_;    // per channel
  std::unordered_set<int64_t> labels_[2];          // per side
};

}  // namespace dualswarm::check

#endif  // DUALSWARM_ENGINE_CHECK_TRACE_VALIDATOR_H_
