#include "workers/daemon/spec_cache.h"

#include <algorithm>

namespace dualswarm::workers {

std::vector<std::string> SpecSourceCache::Known() const {
  std::vector<std::string> out;
  out.reserve(by_hash_.size());
  for (const auto& [hash, entry] : by_hash_) out.push_back(hash);
  return out;
}

std::vector<int64_t> SpecSourceCache::Fill(v1::LeaseJobsResponse* resp) {
  std::vector<int64_t> missing;
  // Fill first, remember after: remembering may forget a version that a
  // later job of this response needs.
  for (auto& job : *resp->mutable_jobs()) {
    if (!job.spec().source().empty()) continue;
    auto it = by_hash_.find(job.spec().hash());
    if (it == by_hash_.end()) {
      missing.push_back(job.job_id());
      continue;
    }
    it->second.first = ++uses_;
    *job.mutable_spec()->mutable_source() = it->second.second.source();
  }
  for (const auto& job : resp->jobs()) {
    if (job.spec().source().empty() || job.spec().hash().empty()) continue;
    auto it = by_hash_.find(job.spec().hash());
    if (it != by_hash_.end()) {
      it->second.first = ++uses_;
      continue;
    }
    if (by_hash_.size() >= capacity_) {
      auto oldest = std::min_element(by_hash_.begin(), by_hash_.end(),
                                     [](const auto& a, const auto& b) { return a.second.first < b.second.first; });
      by_hash_.erase(oldest);
    }
    by_hash_.emplace(job.spec().hash(), std::make_pair(++uses_, job.spec()));
  }
  return missing;
}

}  // namespace dualswarm::workers
