// The worker's cache of spec sources (workers/daemon/spec_cache.h): what it
// lists as known, how it fills jobs sent without their source, and that it
// forgets the least recently used version first.
#include "workers/daemon/spec_cache.h"

#include <algorithm>

#include "gtest/gtest.h"

namespace dualswarm::workers {
namespace {

v1::LeasedJob Job(int64_t id, const std::string& hash, const std::string& source) {
  v1::LeasedJob j;
  j.set_job_id(id);
  j.mutable_spec()->set_hash(hash);
  j.mutable_spec()->set_name("kv");
  j.mutable_spec()->set_source(source);
  return j;
}

bool Knows(const SpecSourceCache& c, const std::string& hash) {
  auto k = c.Known();
  return std::find(k.begin(), k.end(), hash) != k.end();
}

TEST(SpecSourceCache, RemembersSourcesAndFillsJobsSentWithout) {
  SpecSourceCache cache;
  v1::LeaseJobsResponse first;
  *first.add_jobs() = Job(1, "a", "spec kv; // a");
  EXPECT_TRUE(cache.Fill(&first).empty());
  EXPECT_TRUE(Knows(cache, "a"));

  v1::LeaseJobsResponse later;
  *later.add_jobs() = Job(2, "a", "");
  *later.add_jobs() = Job(3, "b", "");  // a version never sent
  *later.add_jobs() = Job(4, "c", "spec kv; // c");
  std::vector<int64_t> missing = cache.Fill(&later);
  EXPECT_EQ(missing, std::vector<int64_t>{3});
  EXPECT_EQ(later.jobs(0).spec().source(), "spec kv; // a");
  EXPECT_TRUE(later.jobs(1).spec().source().empty());
  EXPECT_TRUE(Knows(cache, "c"));
  EXPECT_FALSE(Knows(cache, "b"));
}

TEST(SpecSourceCache, ForgetsTheLeastRecentlyUsedVersionFirst) {
  SpecSourceCache cache(2);
  v1::LeaseJobsResponse r;
  *r.add_jobs() = Job(1, "a", "A");
  *r.add_jobs() = Job(2, "b", "B");
  cache.Fill(&r);
  v1::LeaseJobsResponse use_a;
  *use_a.add_jobs() = Job(3, "a", "");
  cache.Fill(&use_a);
  v1::LeaseJobsResponse add_c;
  *add_c.add_jobs() = Job(4, "c", "C");
  cache.Fill(&add_c);
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_TRUE(Knows(cache, "a"));
  EXPECT_FALSE(Knows(cache, "b"));
  EXPECT_TRUE(Knows(cache, "c"));
}

TEST(SpecSourceCache, AResponseNeverLosesASourceItNeedsToItsOwnNewVersions) {
  // Capacity 1: the response brings "b" (which would push "a" out) and needs "a".
  SpecSourceCache cache(1);
  v1::LeaseJobsResponse r;
  *r.add_jobs() = Job(1, "a", "A");
  cache.Fill(&r);
  v1::LeaseJobsResponse mixed;
  *mixed.add_jobs() = Job(2, "b", "B");
  *mixed.add_jobs() = Job(3, "a", "");
  EXPECT_TRUE(cache.Fill(&mixed).empty());
  EXPECT_EQ(mixed.jobs(1).spec().source(), "A");
}

}  // namespace
}  // namespace dualswarm::workers
