#include "engine/check/step_cache.h"

#include <utility>

#include "absl/hash/hash.h"

namespace dualswarm::check {

StepCache::Key StepCache::MakeKey(std::shared_ptr<const std::vector<ir::Value>> globals, int channel, int32_t request,
                                  int64_t next_fresh) {
  uint64_t h = 0x2545f4914f6cdd1dull;
  for (const auto& g : *globals) h = absl::HashOf(h, g.Hash());
  return Key{std::move(globals), h, channel, request, next_fresh};
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
      steps_.clear();  // what it holds has not been asked for
      nodes_ = 0;
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
    steps_.clear();
    nodes_ = 0;
    ++resets_;
  }
  nodes_ += nodes;
  steps_.insert_or_assign(MakeKey(std::move(globals), channel, request, next_fresh), std::move(outcomes));
}

}  // namespace dualswarm::check
