// ConsumedCounts: per channel, how many of its requests an explanation's
// server has consumed (explanation.h). The search copies explanations far
// more often than it changes a count. Up to kFlatMax channels the counts
// are one plain array (a copy is one small memcpy). A history can open
// thousands of channels, though (an intermediary that opens an origin
// connection per request, clients that crash and reconnect), most of them
// long settled; past kFlatMax the counts move to fixed-size chunks shared,
// copy-on-write, by the copies of an explanation: a copy then costs a
// pointer per chunk, and a change copies one chunk.
#ifndef DUALSWARM_ENGINE_CHECK_CONSUMED_COUNTS_H_
#define DUALSWARM_ENGINE_CHECK_CONSUMED_COUNTS_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace dualswarm::check {

class ConsumedCounts {
 public:
  size_t size() const { return size_; }
  // Channel ch's count; ch < size().
  int32_t operator[](size_t ch) const { return chunks_.empty() ? flat_[ch] : (*chunks_[ch / kChunk])[ch % kChunk]; }
  // Channel ch's count, 0 for a channel beyond size().
  int32_t Of(size_t ch) const { return ch < size_ ? (*this)[ch] : 0; }
  // Grows to n channels with count 0 (never shrinks).
  void Resize(size_t n);
  // One more request of channel ch consumed; ch < size().
  void Increment(size_t ch);

 private:
  static constexpr size_t kFlatMax = 1024;
  static constexpr size_t kChunk = 64;
  using Chunk = std::array<int32_t, kChunk>;
  static const std::shared_ptr<const Chunk>& Zeros();
  std::vector<int32_t> flat_;                         // the counts while size() <= kFlatMax
  std::vector<std::shared_ptr<const Chunk>> chunks_;  // beyond; never changed once shared: Increment copies
  size_t size_ = 0;
};

}  // namespace dualswarm::check

#endif  // DUALSWARM_ENGINE_CHECK_CONSUMED_COUNTS_H_
