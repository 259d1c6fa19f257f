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

#include "engine/check/consumed_counts.h"
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

// A message an intermediary's spec sent to the origin role that no request
// observed on an origin connection has matched yet.
struct PoolEntry {
  ir::Value msg;  // what the spec's server sent (may be symbolic)
  ir::Value tag;  // concrete: the origin handler gets it with the answer
  int64_t label;  // label of the request whose step sent it
  lang::Loc loc;  // the `send`
};

// What an intermediary's explanation has pending with the origin
// (docs/checker.md: intermediaries): the pool of messages sent to the
// origin role and not yet seen there, in no order (the intermediary may
// carry any of them on any origin connection, in any order), and per
// origin channel the tags of the requests it carried whose answers the
// server has not taken yet, oldest first. Empty for any other spec. Shared
// by the copies of an explanation until one changes it, like OwedQueues.
class OriginPending {
 public:
  bool Empty() const { return data_ == nullptr; }
  size_t PoolSize() const { return data_ ? data_->pool.size() : 0; }
  const PoolEntry& PoolAt(size_t j) const { return data_->pool[j]; }  // j < PoolSize()
  void AddToPool(PoolEntry e);
  // Pool entry j is the request seen on origin channel ch: it leaves the
  // pool and its tag joins ch's queue. Returns it.
  PoolEntry Match(size_t j, size_t ch);
  bool HasTag(size_t ch) const;
  const ir::Value& FrontTag(size_t ch) const;  // HasTag(ch)
  void PopTag(size_t ch);                      // HasTag(ch)
  // Of the pool's (msg, tag) pairs, independent of their order, and of
  // each channel's tags in order; 0 when empty. Labels and locs stay out.
  uint64_t Hash() const;
  template <typename F>
  void ForEachPoolEntry(F f) const {
    if (data_ == nullptr) return;
    for (const auto& e : data_->pool) f(e);
  }
  // Calls f(ch, tag) for every tag an origin channel carries.
  template <typename F>
  void ForEachTag(F f) const {
    if (data_ == nullptr) return;
    for (const auto& t : data_->tags) f(t.ch, t.tag);
  }
  // Calls f(PoolEntry&) for every pool entry, on this explanation's own copy.
  template <typename F>
  void ForEachPoolEntryMutable(F f) {
    if (data_ == nullptr) return;
    auto own = std::make_shared<Data>(*data_);
    for (auto& e : own->pool) f(e);
    data_ = std::move(own);
  }

 private:
  struct Tag {
    size_t ch;
    ir::Value tag;
  };
  struct Data {
    std::vector<PoolEntry> pool;
    std::vector<Tag> tags;  // per channel oldest first
  };
  // A copy to change (null when empty); data_ is never changed once shared.
  std::shared_ptr<Data> Own() const { return data_ ? std::make_shared<Data>(*data_) : std::make_shared<Data>(); }
  void Keep(std::shared_ptr<Data> d) { data_ = d->pool.empty() && d->tags.empty() ? nullptr : std::move(d); }
  std::shared_ptr<const Data> data_;
};

// The requests the server took, newest first (shared tails): each one's
// label and the observation whose frame took it.
struct History {
  int64_t label;
  std::shared_ptr<const History> prev;
  size_t at_obs = 0;
  std::shared_ptr<const std::vector<int32_t>> branches;  // the step's (StepOutcome::branches)
};

// The hash Explanation::StateHash gives an explanation with these globals
// and path constraints (the search asks it of a child before building it).
uint64_t StateHashOf(const std::vector<ir::Value>& globals, const std::vector<sym::TermRef>& pc);

struct Explanation {
  std::shared_ptr<const std::vector<ir::Value>> globals;
  std::vector<sym::TermRef> pc;  // residual constraints, each mentions a variable
  ConsumedCounts consumed;       // per channel
  OwedQueues owed;
  OriginPending origin;                    // an intermediary's
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
