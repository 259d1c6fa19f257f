// ValueCarriers: which sent request carries each string value of a trace.
//
// Many servers hand back values their clients sent (a queue's items, a
// store's values). When a response shows such a value, the one request
// that carried it is the one the server must have taken before answering;
// the search's provenance repair (search.h) uses that to reorder what it
// tries, never to decide anything. Only string leaves of two characters or
// more count, and a value two requests carry names neither.
#ifndef DUALSWARM_ENGINE_CHECK_CARRIERS_H_
#define DUALSWARM_ENGINE_CHECK_CARRIERS_H_

#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "engine/ir/value.h"

namespace dualswarm::check {

// A sent request by its channel and position there.
struct RequestRef {
  int ch;
  int32_t index;
  friend bool operator==(const RequestRef& a, const RequestRef& b) { return a.ch == b.ch && a.index == b.index; }
};

class ValueCarriers {
 public:
  // Request `index` on channel `ch` was sent with message `msg`.
  void Note(const ir::Value& msg, int ch, int32_t index);
  // The requests that alone carry one of `observed`'s string values, in
  // the order the values occur (each once).
  std::vector<RequestRef> CarriersOf(const ir::Value& observed) const;

 private:
  static constexpr RequestRef kSeveral{-1, -1};
  absl::flat_hash_map<uint64_t, RequestRef> by_value_;  // string hash -> its one carrier, or kSeveral
};

}  // namespace dualswarm::check

#endif  // DUALSWARM_ENGINE_CHECK_CARRIERS_H_
