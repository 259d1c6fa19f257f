// An explanation's consumed counts (engine/check/consumed_counts.h): flat
// up to its threshold, chunked and shared copy-on-write past it; either way
// a copy never sees the changes of the explanation it was copied from.
#include "engine/check/consumed_counts.h"

#include "gtest/gtest.h"

namespace dualswarm::check {
namespace {

TEST(ConsumedCounts, CopiesAreIndependentOnBothSidesOfTheThreshold) {
  ConsumedCounts a;
  a.Resize(3);
  a.Increment(1);
  ConsumedCounts b = a;
  b.Increment(1);
  EXPECT_EQ(a[1], 1);
  EXPECT_EQ(b[1], 2);
  // Grown past the flat threshold: the counts so far carry over.
  a.Resize(5000);
  EXPECT_EQ(a.size(), 5000u);
  EXPECT_EQ(a[1], 1);
  EXPECT_EQ(a[4999], 0);
  EXPECT_EQ(a.Of(6000), 0);
  ConsumedCounts c = a;
  for (int i = 0; i < 3; ++i) c.Increment(4321);
  c.Increment(1);
  EXPECT_EQ(a[4321], 0);
  EXPECT_EQ(a[1], 1);
  EXPECT_EQ(c[4321], 3);
  EXPECT_EQ(c[1], 2);
  c.Resize(5100);  // growing a chunk shared with `a` changes nothing there
  EXPECT_EQ(c[5050], 0);
  EXPECT_EQ(a.size(), 5000u);
}

}  // namespace
}  // namespace dualswarm::check
