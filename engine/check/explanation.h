// Explanation: one way the server may have behaved so far — the spec's
// state, the residual path constraints over `fresh` values, and per channel
// how many requests the server consumed and which responses it owes the
// client. The checker's search (search.h) grows and prunes explanations;
// this header only says what one is.
#ifndef DUALSWARM_ENGINE_CHECK_EXPLANATION_H_
#define DUALSWARM_ENGINE_CHECK_EXPLANATION_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "engine/ir/value.h"
#include "engine/lang/loc.h"
#include "engine/sym/term.h"

namespace dualswarm::check {

// A response the spec's server sent that the client has not received yet.
struct Owed {
  ir::Value msg;   // what the spec's server sent (may be symbolic)
  int64_t label;   // label of the request whose step produced it
  lang::Loc loc;   // the `send`
};

// The labels of the requests the server took, newest first (shared tails).
struct History {
  int64_t label;
  std::shared_ptr<const History> prev;
};

struct Explanation {
  std::shared_ptr<const std::vector<ir::Value>> globals;
  std::vector<sym::TermRef> pc;         // residual constraints, each mentions a variable
  std::vector<int32_t> consumed;        // per channel
  std::vector<std::vector<Owed>> owed;  // per channel, FIFO
  int64_t next_fresh = 0;               // id of the next `fresh` variable
  std::shared_ptr<const History> history;  // for rejection reports only

  void EnsureChannels(size_t n);
  // Hash of the spec state and the path constraints (order-insensitive):
  // the part of the memo key that does not depend on channels.
  uint64_t StateHash() const;
  // The last `limit` request labels in the order the server took them.
  std::vector<int64_t> ServerOrder(size_t limit = 64) const;
};

}  // namespace dualswarm::check

#endif  // DUALSWARM_ENGINE_CHECK_EXPLANATION_H_
