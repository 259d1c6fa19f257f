#include "engine/check/consumed_counts.h"

#include <algorithm>

namespace dualswarm::check {

const std::shared_ptr<const ConsumedCounts::Chunk>& ConsumedCounts::Zeros() {
  static const auto* zeros = new std::shared_ptr<const Chunk>(std::make_shared<const Chunk>(Chunk{}));
  return *zeros;
}

void ConsumedCounts::Resize(size_t n) {
  if (n <= size_) return;
  size_ = n;
  if (chunks_.empty() && n <= kFlatMax) {
    flat_.resize(n, 0);
    return;
  }
  if (chunks_.empty()) {  // past kFlatMax: the flat counts become chunks
    for (size_t from = 0; from < flat_.size(); from += kChunk) {
      auto chunk = std::make_shared<Chunk>(Chunk{});
      std::copy(flat_.begin() + static_cast<std::ptrdiff_t>(from),
                flat_.begin() + static_cast<std::ptrdiff_t>(std::min(flat_.size(), from + kChunk)), chunk->begin());
      chunks_.push_back(std::move(chunk));
    }
    flat_.clear();
    flat_.shrink_to_fit();
  }
  // Counts past the old size in its last chunk are 0 already.
  while (chunks_.size() * kChunk < n) chunks_.push_back(Zeros());
}

void ConsumedCounts::Increment(size_t ch) {
  if (chunks_.empty()) {
    ++flat_[ch];
    return;
  }
  std::shared_ptr<const Chunk>& chunk = chunks_[ch / kChunk];
  auto own = std::make_shared<Chunk>(*chunk);
  ++(*own)[ch % kChunk];
  chunk = std::move(own);
}

}  // namespace dualswarm::check
