// proto/names/wire_names.h: the one mapping between the API's enum values
// and their words, as the store, the metrics and the CLI list them.
#include "proto/names/wire_names.h"

#include <gtest/gtest.h>

#include "dualswarm/v1/run.pb.h"
#include "dualswarm/v1/worker.pb.h"

namespace dualswarm::wire {
namespace {

namespace v1 = ::dualswarm::v1;

TEST(WireNames, WordsRoundTripForEveryValueButZero) {
  std::vector<v1::JobState> states = EnumValues<v1::JobState>();
  ASSERT_EQ(states.size(), 6u);
  EXPECT_EQ(states.front(), v1::JOB_STATE_QUEUED);
  for (v1::JobState s : states) {
    EXPECT_TRUE(IsKnown(s)) << s;
    EXPECT_EQ(EnumFromWord<v1::JobState>(EnumWord(s)), s) << EnumWord(s);
  }
  EXPECT_EQ(EnumWord(v1::JOB_STATE_CANCELLED), "cancelled");
  EXPECT_EQ(EnumWord(v1::VERDICT_KIND_SPEC_ERROR), "spec-error");
}

TEST(WireNames, ZeroAndUndefinedValuesAreNotKnown) {
  EXPECT_FALSE(IsKnown(v1::JOB_OUTCOME_UNSPECIFIED));
  EXPECT_FALSE(IsKnown(static_cast<v1::JobOutcome>(99)));
  EXPECT_EQ(EnumWord(static_cast<v1::JobOutcome>(99)), "");
  EXPECT_EQ(EnumFromWord<v1::RunState>("bogus"), v1::RUN_STATE_UNSPECIFIED);
}

TEST(WireNames, ChoicesJoinTheWordsWithTheSeparator) {
  EXPECT_EQ(EnumChoices<v1::JobOutcome>(), "passed|failed|inconclusive|error");
  EXPECT_EQ(EnumChoices<v1::JobOutcome>(", "), "passed, failed, inconclusive, error");
}

}  // namespace
}  // namespace dualswarm::wire
