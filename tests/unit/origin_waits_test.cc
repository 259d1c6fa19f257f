// OriginWaits (engine/harness/origin_waits.h): the times the SUT may have
// waited on the tester as its origin, which liveness does not count.
#include "engine/harness/origin_waits.h"

#include "gtest/gtest.h"

namespace dualswarm::harness {
namespace {

TEST(OriginWaits, APeriodRunsFromThePollBeforeARequestUntilNothingIsOwed) {
  OriginWaits w;
  w.Update(false, 0, 5);    // nothing owed
  w.Update(true, 10, 40);   // a request read by the poll at 10: owed since 10
  w.Update(true, 40, 70);   // still owed
  w.Update(false, 70, 90);  // answered by 90
  EXPECT_EQ(w.Within(0, 100), 80);
  EXPECT_EQ(w.Within(20, 100), 70);
  EXPECT_EQ(w.Within(0, 30), 20);
  EXPECT_EQ(w.Within(90, 100), 0);
  EXPECT_EQ(w.Within(50, 50), 0);
}

TEST(OriginWaits, ARequestReadAndAnsweredInOneTurnCountsToo) {
  OriginWaits w;
  w.Update(true, 100, 130);  // read and answered within the turn
  w.Update(false, 130, 131);
  EXPECT_EQ(w.Within(0, 200), 31);
}

TEST(OriginWaits, PeriodsAddUpWithoutCountingOverlapsTwiceAndAnOpenOneRunsToTheEnd) {
  OriginWaits w;
  w.Update(true, 0, 10);
  w.Update(false, 10, 20);  // [0, 20]
  w.Update(true, 15, 30);   // opened at the poll at 15, before the last end: from 20
  w.Update(false, 30, 40);  // [20, 40]
  w.Update(true, 100, 110);
  w.Update(false, 110, 150);  // [100, 150]
  w.Update(true, 200, 210);   // open since 200
  EXPECT_EQ(w.Within(0, 1000), 20 + 20 + 50 + 800);
  EXPECT_EQ(w.Within(30, 120), 10 + 20);
  EXPECT_EQ(w.Within(45, 95), 0);
  EXPECT_EQ(w.Within(120, 205), 30 + 5);
  EXPECT_EQ(w.Within(0, 250), 20 + 20 + 50 + 50);
}

}  // namespace
}  // namespace dualswarm::harness
