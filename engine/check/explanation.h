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
  ir::Value msg;  // what the spec's server sent (may be symbolic)
  int64_t label;  // label of the request whose step produced it
  lang::Loc loc;  // the `send`
};

// The responses the spec's server owes, per channel, each channel's in FIFO
// order. Few are owed at once (about one per request in flight), so they
// live in one small flat list rather than a list per channel, and the list
// is shared by the copies of an explanation until one changes it: copying
// and moving explanations — the search's most frequent acts — never copy
// what is owed.
class OwedQueues {
 public:
  bool Empty(size_t ch) const { return Count(ch) == 0; }
  size_t Count(size_t ch) const;
  bool AnyOwed() const { return entries_ != nullptr; }
  size_t Size() const { return entries_ ? entries_->size() : 0; }  // over all channels
  const Owed& Front(size_t ch) const;                              // the channel must owe something
  const Owed& Back(size_t ch) const;                               // the channel must owe something
  Owed PopFront(size_t ch);                                        // the channel must owe something
  void Push(size_t ch, Owed o);
  void Clear(size_t ch);
  // Calls f(const Owed&) for channel ch's owed responses, oldest first.
  template <typename F>
  void ForChannel(size_t ch, F f) const {
    if (entries_ == nullptr) return;
    for (const auto& e : *entries_)
      if (e.ch == ch) f(e.owed);
  }
  // Calls f(channel, const Owed&) for every owed response, each channel's
  // oldest first.
  template <typename F>
  void ForEach(F f) const {
    if (entries_ == nullptr) return;
    for (const auto& e : *entries_) f(e.ch, e.owed);
  }
  // Calls f(Owed&) for every owed response (any order), on this
  // explanation's own copy of the list.
  template <typename F>
  void ForEachMutable(F f) {
    if (entries_ == nullptr) return;
    auto own = std::make_shared<std::vector<Entry>>(*entries_);
    for (auto& e : *own) f(e.owed);
    entries_ = std::move(own);
  }

 private:
  struct Entry {
    size_t ch;
    Owed owed;
  };
  // Per channel oldest first; null when nothing is owed; never changed
  // once shared (every change makes a new list).
  std::shared_ptr<const std::vector<Entry>> entries_;
};

// The requests the server took, newest first (shared tails): each one's
// label and the observation whose frame took it.
struct History {
  int64_t label;
  std::shared_ptr<const History> prev;
  size_t at_obs = 0;
};

// The hash Explanation::StateHash gives an explanation with these globals
// and path constraints (the search asks it of a child before building it).
uint64_t StateHashOf(const std::vector<ir::Value>& globals, const std::vector<sym::TermRef>& pc);

struct Explanation {
  std::shared_ptr<const std::vector<ir::Value>> globals;
  std::vector<sym::TermRef> pc;   // residual constraints, each mentions a variable
  std::vector<int32_t> consumed;  // per channel
  OwedQueues owed;
  int64_t next_fresh = 0;                  // id of the next `fresh` variable
  std::shared_ptr<const History> history;  // for rejection reports and provenance repair

  void EnsureChannels(size_t n);
  // Hash of the spec state and the path constraints (order-insensitive):
  // the part of the memo key that does not depend on channels.
  uint64_t StateHash() const { return StateHashOf(*globals, pc); }
  // The last `limit` request labels in the order the server took them.
  std::vector<int64_t> ServerOrder(size_t limit = 64) const;
};

}  // namespace dualswarm::check

#endif  // DUALSWARM_ENGINE_CHECK_EXPLANATION_H_
