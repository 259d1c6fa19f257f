#include "engine/harness/origin_waits.h"

#include <algorithm>

namespace dualswarm::harness {

void OriginWaits::Update(bool owing, int64_t poll_ns, int64_t now_ns) {
  if (owing && !open_since_) {
    // What a period before it counted is not counted twice.
    open_since_ = ends_.empty() ? poll_ns : std::max(poll_ns, ends_.back());
  } else if (!owing && open_since_) {
    const int64_t start = *open_since_;
    const int64_t end = std::max(now_ns, start);
    starts_.push_back(start);
    ends_.push_back(end);
    prefix_.push_back(prefix_.back() + (end - start));
    open_since_.reset();
  }
}

int64_t OriginWaits::Within(int64_t from_ns, int64_t to_ns) const {
  if (to_ns <= from_ns) return 0;
  auto overlap = [&](int64_t s, int64_t e) { return std::max<int64_t>(0, std::min(e, to_ns) - std::max(s, from_ns)); };
  // Periods [i, j) end after from_ns and start before to_ns.
  const size_t i = static_cast<size_t>(std::upper_bound(ends_.begin(), ends_.end(), from_ns) - ends_.begin());
  const size_t j = static_cast<size_t>(std::lower_bound(starts_.begin(), starts_.end(), to_ns) - starts_.begin());
  int64_t total = 0;
  if (i < j) {
    total += overlap(starts_[i], ends_[i]);
    if (j - 1 > i) {
      total += prefix_[j - 1] - prefix_[i + 1];  // periods i+1 .. j-2, whole
      total += overlap(starts_[j - 1], ends_[j - 1]);
    }
  }
  if (open_since_) total += overlap(*open_since_, to_ns);
  return total;
}

}  // namespace dualswarm::harness
