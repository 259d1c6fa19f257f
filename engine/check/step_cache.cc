#include "engine/check/step_cache.h"

#include <utility>

#include "absl/hash/hash.h"

namespace dualswarm::check {

GlobalsKey GlobalsKey::Of(std::shared_ptr<const std::vector<ir::Value>> globals) {
  uint64_t h = 0x2545f4914f6cdd1dull;
  for (const auto& g : *globals) h = absl::HashOf(h, g.Hash());
  return GlobalsKey{std::move(globals), h};
}

StepCache::Key StepCache::MakeKey(std::shared_ptr<const std::vector<ir::Value>> globals, int channel, int32_t request,
                                  int64_t next_fresh) {
  return Key{GlobalsKey::Of(std::move(globals)), channel, request, next_fresh};
}

StepCache::~StepCache() {
  if (freeing_.valid()) freeing_.wait();
}

// Forgets every step. A full cache can hold millions of value nodes, and
// freeing them where the search runs cost one online observation 100 ms
// (a 10,000-request queue history): they are freed by a thread of their
// own (values share parts only through std::shared_ptr, whose counts are
// atomic), one batch at a time. Small caches are freed at once: freeing on
// another thread made the 50-client kv histories 20 % slower (tcmalloc's
// per-thread caches, a thread per batch).
void StepCache::Forget() {
  interned_.clear();
  if (nodes_ < kFreeAsideFromNodes) {  // small: a thread would cost more than it saves
    steps_.clear();
    nodes_ = 0;
    return;
  }
  std::vector<std::shared_ptr<const StepOutcomes>> batch;
  batch.reserve(steps_.size());
  for (auto& [key, outcomes] : steps_) batch.push_back(std::move(outcomes));
  steps_.clear();  // the keys' states are held by live explanations or the outcomes
  nodes_ = 0;
  if (freeing_.valid()) freeing_.wait();
  freeing_ = std::async(std::launch::async, [batch = std::move(batch)]() mutable { batch.clear(); });
}

std::shared_ptr<const std::vector<ir::Value>> StepCache::Intern(std::shared_ptr<const std::vector<ir::Value>> globals) {
  if (interned_.size() >= max_entries_) interned_.clear();
  return interned_.insert(GlobalsKey::Of(std::move(globals))).first->globals;
}

bool StepCache::Active() {
  if (sit_out_ == 0) return true;
  --sit_out_;
  return false;
}

std::shared_ptr<const StepOutcomes> StepCache::Find(const std::shared_ptr<const std::vector<ir::Value>>& globals,
                                                    int channel, int32_t request, int64_t next_fresh) {
  auto it = steps_.find(MakeKey(globals, channel, request, next_fresh));
  std::shared_ptr<const StepOutcomes> found = it == steps_.end() ? nullptr : it->second;
  hits_ += found != nullptr;
  if (++lookups_ == kWindow) {
    if (hits_ * 8 < lookups_) {
      sit_out_ = kSitOutSteps;
      Forget();  // what it holds has not been asked for
    }
    lookups_ = hits_ = 0;
  }
  return found;  // taken before a clear() could free it
}

void StepCache::Insert(std::shared_ptr<const std::vector<ir::Value>> globals, int channel, int32_t request,
                       int64_t next_fresh, std::shared_ptr<const StepOutcomes> outcomes) {
  uint64_t nodes = 0;
  for (const StepOutcome& o : *outcomes) {
    for (const auto& g : *o.globals) nodes += g.TreeSize();
    for (const auto& send : o.sends) nodes += send.msg.TreeSize();
  }
  if (steps_.size() >= max_entries_ || nodes_ + nodes > max_nodes_) {
    Forget();
    ++resets_;
  }
  nodes_ += nodes;
  steps_.insert_or_assign(MakeKey(std::move(globals), channel, request, next_fresh), std::move(outcomes));
}

}  // namespace dualswarm::check
