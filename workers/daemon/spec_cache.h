// SpecSourceCache: the spec versions a worker has been sent, by hash. The
// worker lists them in LeaseJobs (known_spec_hashes) and the coordinator
// then leaves their sources out of later leases; Fill puts each job's
// source back from the copy held. Bounded: the least recently used version
// is forgotten first (the coordinator then sends it again).
#ifndef DUALSWARM_WORKERS_DAEMON_SPEC_CACHE_H_
#define DUALSWARM_WORKERS_DAEMON_SPEC_CACHE_H_

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "dualswarm/v1/worker.pb.h"

namespace dualswarm::workers {

class SpecSourceCache {
 public:
  explicit SpecSourceCache(size_t capacity = 64) : capacity_(capacity == 0 ? 1 : capacity) {}

  // The hashes to list in the next LeaseJobsRequest.
  std::vector<std::string> Known() const;

  // Fills in the source of every job of `resp` that came without one, then
  // remembers the versions that came with theirs. Returns the ids of jobs
  // left without a source (a version this worker does not hold).
  std::vector<int64_t> Fill(v1::LeaseJobsResponse* resp);

  size_t size() const { return by_hash_.size(); }

 private:
  size_t capacity_;
  uint64_t uses_ = 0;
  std::map<std::string, std::pair<uint64_t, v1::Spec>> by_hash_;  // hash -> (last use, version)
};

}  // namespace dualswarm::workers

#endif  // DUALSWARM_WORKERS_DAEMON_SPEC_CACHE_H_
