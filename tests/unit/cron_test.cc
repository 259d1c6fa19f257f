// services/coordinator/cron: every syntax form, next fire times across
// hour/day/month/year boundaries, Feb 29, the day-of-month/day-of-week OR
// rule, and bad expressions refused with the field and value named.
#include "services/coordinator/cron.h"

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/time/civil_time.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace dualswarm::coord {
namespace {

int64_t At(int y, int mo, int d, int h = 0, int mi = 0, int s = 0) {
  return absl::ToUnixMicros(absl::FromCivil(absl::CivilSecond(y, mo, d, h, mi, s), absl::UTCTimeZone()));
}

std::string Fmt(int64_t us) {
  if (us == 0) return "never";
  return absl::FormatTime("%Y-%m-%d %H:%M:%S %a", absl::FromUnixMicros(us), absl::UTCTimeZone());
}

CronSchedule MustParse(const std::string& expr) {
  auto s = CronSchedule::Parse(expr);
  EXPECT_TRUE(s.ok()) << expr << ": " << s.status();
  if (!s.ok()) return *CronSchedule::Parse("* * * * *");
  return *s;
}

// The next `n` fire times after `from`, formatted.
std::vector<std::string> Fires(const std::string& expr, int64_t from, int n) {
  CronSchedule s = MustParse(expr);
  std::vector<std::string> out;
  int64_t t = from;
  for (int i = 0; i < n; ++i) {
    t = s.Next(t);
    out.push_back(Fmt(t));
    if (t == 0) break;
  }
  return out;
}

using V = std::vector<std::string>;

TEST(CronTest, EveryMinuteAndStrictlyAfter) {
  EXPECT_EQ(Fires("* * * * *", At(2024, 5, 1, 12, 0, 0), 3),
            (V{"2024-05-01 12:01:00 Wed", "2024-05-01 12:02:00 Wed", "2024-05-01 12:03:00 Wed"}));
  // Seconds and microseconds into a minute: the next whole minute.
  EXPECT_EQ(Fmt(MustParse("* * * * *").Next(At(2024, 5, 1, 12, 0, 59) + 999999)), "2024-05-01 12:01:00 Wed");
  // A fire time itself is not "after" itself.
  EXPECT_EQ(Fmt(MustParse("0 3 * * *").Next(At(2024, 5, 1, 3, 0))), "2024-05-02 03:00:00 Thu");
  EXPECT_EQ(Fmt(MustParse("0 3 * * *").Next(At(2024, 5, 1, 2, 59, 59))), "2024-05-01 03:00:00 Wed");
}

TEST(CronTest, NumbersListsRangesAndSteps) {
  int64_t from = At(2024, 5, 1, 0, 0);
  EXPECT_EQ(Fires("5 * * * *", from, 2), (V{"2024-05-01 00:05:00 Wed", "2024-05-01 01:05:00 Wed"}));
  EXPECT_EQ(Fires("1,30,59 * * * *", from, 4), (V{"2024-05-01 00:01:00 Wed", "2024-05-01 00:30:00 Wed",
                                                  "2024-05-01 00:59:00 Wed", "2024-05-01 01:01:00 Wed"}));
  EXPECT_EQ(Fires("10-12 * * * *", from, 4), (V{"2024-05-01 00:10:00 Wed", "2024-05-01 00:11:00 Wed",
                                                "2024-05-01 00:12:00 Wed", "2024-05-01 01:10:00 Wed"}));
  EXPECT_EQ(Fires("*/20 * * * *", from, 4), (V{"2024-05-01 00:20:00 Wed", "2024-05-01 00:40:00 Wed",
                                               "2024-05-01 01:00:00 Wed", "2024-05-01 01:20:00 Wed"}));
  EXPECT_EQ(Fires("0 9-17/4 * * *", from, 4), (V{"2024-05-01 09:00:00 Wed", "2024-05-01 13:00:00 Wed",
                                                 "2024-05-01 17:00:00 Wed", "2024-05-02 09:00:00 Thu"}));
  // Items of every form mixed in one list.
  EXPECT_EQ(Fires("0 1,3-4,20-23/2 * * *", from, 6),
            (V{"2024-05-01 01:00:00 Wed", "2024-05-01 03:00:00 Wed", "2024-05-01 04:00:00 Wed",
               "2024-05-01 20:00:00 Wed", "2024-05-01 22:00:00 Wed", "2024-05-02 01:00:00 Thu"}));
  // Tabs and extra spaces separate fields too.
  EXPECT_EQ(Fires("  30\t2  * *   * ", from, 1), (V{"2024-05-01 02:30:00 Wed"}));
  EXPECT_EQ(MustParse(" 0 3 * * * ").expression(), "0 3 * * *");
}

TEST(CronTest, MonthAndYearBoundaries) {
  // Nightly across the end of a 30-day month and of the year.
  EXPECT_EQ(Fires("0 3 * * *", At(2024, 4, 30, 4, 0), 1), (V{"2024-05-01 03:00:00 Wed"}));
  EXPECT_EQ(Fires("0 3 * * *", At(2024, 12, 31, 3, 0), 2), (V{"2025-01-01 03:00:00 Wed", "2025-01-02 03:00:00 Thu"}));
  EXPECT_EQ(Fires("59 23 31 12 *", At(2024, 1, 1), 2), (V{"2024-12-31 23:59:00 Tue", "2025-12-31 23:59:00 Wed"}));
  // The 31st skips months that have 30 days (and February).
  EXPECT_EQ(Fires("0 0 31 * *", At(2024, 1, 31, 1, 0), 3),
            (V{"2024-03-31 00:00:00 Sun", "2024-05-31 00:00:00 Fri", "2024-07-31 00:00:00 Wed"}));
  // Only some months.
  EXPECT_EQ(Fires("0 0 1 1,7 *", At(2024, 2, 1), 3),
            (V{"2024-07-01 00:00:00 Mon", "2025-01-01 00:00:00 Wed", "2025-07-01 00:00:00 Tue"}));
  EXPECT_EQ(Fires("15 10 * 11-12/1 *", At(2024, 5, 1), 1), (V{"2024-11-01 10:15:00 Fri"}));
}

TEST(CronTest, February29) {
  EXPECT_EQ(Fires("0 12 29 2 *", At(2024, 3, 1), 3),
            (V{"2028-02-29 12:00:00 Tue", "2032-02-29 12:00:00 Sun", "2036-02-29 12:00:00 Fri"}));
  // 2100 is not a leap year: eight years from 2096 to 2104.
  EXPECT_EQ(Fires("0 0 29 2 *", At(2096, 3, 1), 1), (V{"2104-02-29 00:00:00 Fri"}));
  // Every day of February in a leap year has a 29th.
  EXPECT_EQ(Fires("0 0 28-31 2 *", At(2024, 2, 28, 1, 0), 2),
            (V{"2024-02-29 00:00:00 Thu", "2025-02-28 00:00:00 Fri"}));
}

TEST(CronTest, DayOfWeek) {
  // 2024-05-01 is a Wednesday.
  EXPECT_EQ(Fires("0 9 * * 1-5", At(2024, 5, 3, 10, 0), 2), (V{"2024-05-06 09:00:00 Mon", "2024-05-07 09:00:00 Tue"}));
  // 0 and 7 are both Sunday.
  EXPECT_EQ(Fires("0 0 * * 0", At(2024, 5, 1), 1), (V{"2024-05-05 00:00:00 Sun"}));
  EXPECT_EQ(Fires("0 0 * * 7", At(2024, 5, 1), 1), (V{"2024-05-05 00:00:00 Sun"}));
  EXPECT_EQ(Fires("0 0 * * 5-7", At(2024, 5, 1), 3),
            (V{"2024-05-03 00:00:00 Fri", "2024-05-04 00:00:00 Sat", "2024-05-05 00:00:00 Sun"}));
}

TEST(CronTest, DayOfMonthOrDayOfWeekWhenBothRestricted) {
  // The 13th of each month OR any Friday.
  EXPECT_EQ(Fires("0 0 13 * 5", At(2024, 5, 1), 4), (V{"2024-05-03 00:00:00 Fri", "2024-05-10 00:00:00 Fri",
                                                       "2024-05-13 00:00:00 Mon", "2024-05-17 00:00:00 Fri"}));
  // With day-of-week "*" only the day of month counts (and vice versa).
  EXPECT_EQ(Fires("0 0 13 * *", At(2024, 5, 1), 2), (V{"2024-05-13 00:00:00 Mon", "2024-06-13 00:00:00 Thu"}));
  EXPECT_EQ(Fires("0 0 * * 1", At(2024, 5, 1), 2), (V{"2024-05-06 00:00:00 Mon", "2024-05-13 00:00:00 Mon"}));
  // A field beginning with * counts as unrestricted (Vixie cron): */10 (days 1,
  // 11, 21, 31) AND Mondays, not either.
  EXPECT_EQ(Fires("0 0 */10 * 1", At(2023, 12, 31), 3),
            (V{"2024-01-01 00:00:00 Mon", "2024-03-11 00:00:00 Mon", "2024-04-01 00:00:00 Mon"}));
  CronSchedule s = MustParse("0 0 */10 * 1");
  for (int64_t t = s.Next(At(2024, 1, 1)), i = 0; i < 20; t = s.Next(t), ++i) {
    absl::CivilDay d = absl::ToCivilDay(absl::FromUnixMicros(t), absl::UTCTimeZone());
    EXPECT_EQ(absl::GetWeekday(d), absl::Weekday::monday) << Fmt(t);
    EXPECT_EQ((d.day() - 1) % 10, 0) << Fmt(t);
  }
  // Feb 30 never exists, but with a weekday as well it fires on that weekday.
  EXPECT_EQ(Fires("0 0 30 2 1", At(2024, 1, 1), 2), (V{"2024-02-05 00:00:00 Mon", "2024-02-12 00:00:00 Mon"}));
}

TEST(CronTest, Matches) {
  CronSchedule s = MustParse("30 3 * * 1-5");
  EXPECT_TRUE(s.Matches(At(2024, 5, 1, 3, 30, 0)));
  EXPECT_TRUE(s.Matches(At(2024, 5, 1, 3, 30, 59)));
  EXPECT_FALSE(s.Matches(At(2024, 5, 1, 3, 31, 0)));
  EXPECT_FALSE(s.Matches(At(2024, 5, 4, 3, 30, 0)));  // Saturday
  // Every fire time Next returns matches, and no minute in between does.
  int64_t t = At(2024, 5, 1);
  for (int i = 0; i < 5; ++i) {
    int64_t next = s.Next(t);
    EXPECT_TRUE(s.Matches(next)) << Fmt(next);
    for (int64_t m = (t / 60000000 + 1) * 60000000; m < next; m += 60000000) ASSERT_FALSE(s.Matches(m)) << Fmt(m);
    t = next;
  }
}

TEST(CronTest, BadExpressionsSayWhichFieldAndValue) {
  struct Bad {
    std::string expr;
    std::vector<std::string> want;  // substrings of the message
  };
  std::vector<Bad> bad = {
      {"", {"want 5 fields", "got 0"}},
      {"* * * *", {"want 5 fields (minute hour day-of-month month day-of-week), got 4"}},
      {"0 3 * * * *", {"got 6"}},
      {"60 * * * *", {"minute \"60\"", "60 is out of range 0-59"}},
      {"0 24 * * *", {"hour \"24\"", "24 is out of range 0-23"}},
      {"0 0 0 * *", {"day-of-month \"0\"", "0 is out of range 1-31"}},
      {"0 0 32 * *", {"day-of-month \"32\"", "out of range 1-31"}},
      {"0 0 * 13 *", {"month \"13\"", "13 is out of range 1-12"}},
      {"0 0 * 0 *", {"month \"0\"", "out of range 1-12"}},
      {"0 0 * * 8", {"day-of-week \"8\"", "8 is out of range 0-7"}},
      {"0 0 * JAN *", {"month \"JAN\"", "\"JAN\" is not a number"}},
      {"0 0 * * MON", {"day-of-week \"MON\"", "not a number"}},
      {"x * * * *", {"minute \"x\"", "\"x\" is not a number"}},
      {"-5 * * * *", {"minute \"-5\"", "\"\" is not a number"}},
      {"5- * * * *", {"minute \"5-\""}},
      {"1,,2 * * * *", {"minute \"1,,2\"", "empty list item"}},
      {"1, * * * *", {"empty list item"}},
      {"30-10 * * * *", {"minute \"30-10\"", "range 30-10 is backwards"}},
      {"*/0 * * * *", {"minute \"*/0\"", "step 0"}},
      {"*/x * * * *", {"step \"x\""}},
      {"*/ * * * *", {"step \"\""}},
      {"5/15 * * * *", {"minute \"5/15\"", "a step needs * or a range", "5-59/15"}},
      {"0 0 30 2 *", {"day-of-month \"30\" never occurs in month \"2\""}},
      {"0 0 31 4,6,9,11 *", {"never occurs"}},
      {"0 0 30 2 */2", {"never occurs"}},
      {"? * * * *", {"not a number"}},
      {"@daily", {"want 5 fields"}},
      {"99999 * * * *", {"minute \"99999\"", "99999 is out of range 0-59"}},
      {"9999999999 * * * *", {"not a number"}},
  };
  for (const Bad& b : bad) {
    auto s = CronSchedule::Parse(b.expr);
    ASSERT_FALSE(s.ok()) << "accepted \"" << b.expr << "\"";
    EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument) << b.expr;
    std::string msg(s.status().message());
    EXPECT_TRUE(absl::StartsWith(msg, "cron \"" + b.expr + "\": ")) << msg;
    for (const auto& w : b.want) EXPECT_TRUE(absl::StrContains(msg, w)) << "want \"" << w << "\" in: " << msg;
  }
}

TEST(CronTest, NextIsCheapForSparseSchedules) {
  // Far-apart fire times are found by skipping months/days/hours, not by
  // walking minutes (a minute walk over 8 years would take seconds).
  auto start = absl::Now();
  CronSchedule s = MustParse("0 0 29 2 *");
  int64_t t = At(2096, 3, 1);
  for (int i = 0; i < 200; ++i) EXPECT_NE(s.Next(t), 0);
  EXPECT_LT(absl::Now() - start, absl::Seconds(2));
}

}  // namespace
}  // namespace dualswarm::coord
