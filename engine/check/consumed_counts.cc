#include "engine/check/consumed_counts.h"

namespace dualswarm::check {

const std::shared_ptr<const ConsumedCounts::Chunk>& ConsumedCounts::Zeros() {
  static const auto* zeros = new std::shared_ptr<const Chunk>(std::make_shared<const Chunk>(Chunk{}));
  return *zeros;
}

void ConsumedCounts::Resize(size_t n) {
  if (n <= size_) return;
  size_ = n;
  // Counts past the old size in its last chunk are 0 already.
  while (chunks_.size() * kChunk < n) chunks_.push_back(Zeros());
}

void ConsumedCounts::Increment(size_t ch) {
  std::shared_ptr<const Chunk>& chunk = chunks_[ch / kChunk];
  auto own = std::make_shared<Chunk>(*chunk);
  ++(*own)[ch % kChunk];
  chunk = std::move(own);
}

}  // namespace dualswarm::check
