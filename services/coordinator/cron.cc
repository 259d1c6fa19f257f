#include "services/coordinator/cron.h"

#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/civil_time.h"
#include "absl/time/time.h"

namespace dualswarm::coord {
namespace {

struct FieldSpec {
  const char* name;
  int lo, hi;
};

constexpr FieldSpec kFields[5] = {
    {"minute", 0, 59}, {"hour", 0, 23}, {"day-of-month", 1, 31}, {"month", 1, 12}, {"day-of-week", 0, 7}};

bool AllDigits(absl::string_view s) {
  if (s.empty() || s.size() > 9) return false;
  for (char c : s)
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

// Parses one field into `bits` (bit v set for each value v it allows);
// returns "" or why it is wrong.
std::string ParseField(absl::string_view text, const FieldSpec& f, std::vector<bool>* bits) {
  bits->assign(f.hi + 1, false);
  auto number = [&](absl::string_view s, int* out) -> std::string {
    if (!AllDigits(s)) return absl::StrCat("\"", s, "\" is not a number");
    (void)absl::SimpleAtoi(s, out);
    if (*out < f.lo || *out > f.hi) return absl::StrCat(*out, " is out of range ", f.lo, "-", f.hi);
    return "";
  };
  for (absl::string_view item : absl::StrSplit(text, ',')) {
    if (item.empty()) return "empty list item";
    absl::string_view base = item, step_text;
    bool has_step = false;
    if (size_t slash = item.find('/'); slash != absl::string_view::npos) {
      base = item.substr(0, slash);
      step_text = item.substr(slash + 1);
      has_step = true;
    }
    int lo = 0, hi = 0, step = 1;
    if (has_step) {
      if (!AllDigits(step_text)) return absl::StrCat("step \"", step_text, "\" in \"", item, "\" is not a number");
      (void)absl::SimpleAtoi(step_text, &step);
      if (step < 1) return absl::StrCat("step 0 in \"", item, "\"");
    }
    if (base == "*") {
      lo = f.lo;
      hi = f.hi;
      if (f.lo == 0 && f.hi == 7) hi = 6;  // */2 in day-of-week: Sunday once
    } else if (size_t dash = base.find('-'); dash != absl::string_view::npos) {
      if (std::string e = number(base.substr(0, dash), &lo); !e.empty()) return e;
      if (std::string e = number(base.substr(dash + 1), &hi); !e.empty()) return e;
      if (lo > hi) return absl::StrCat("range ", lo, "-", hi, " is backwards");
    } else {
      if (has_step)
        return absl::StrCat("a step needs * or a range before it (\"", item, "\"; write \"", base, "-", f.hi, "/",
                            step_text, "\")");
      if (std::string e = number(base, &lo); !e.empty()) return e;
      hi = lo;
    }
    for (int v = lo; v <= hi; v += step) (*bits)[v] = true;
  }
  return "";
}

int DaysInMonth(int year, int month) {
  return static_cast<int>(absl::CivilDay(absl::CivilMonth(year, month) + 1) - absl::CivilDay(year, month, 1));
}

int WeekdayIndex(absl::CivilDay d) {  // Sunday = 0
  absl::Weekday w = absl::GetWeekday(d);
  return w == absl::Weekday::sunday ? 0 : static_cast<int>(w) + 1;
}

}  // namespace

absl::StatusOr<CronSchedule> CronSchedule::Parse(absl::string_view expr) {
  std::vector<absl::string_view> fields = absl::StrSplit(expr, absl::ByAnyChar(" \t"), absl::SkipEmpty());
  auto fail = [&](const std::string& why) {
    return absl::InvalidArgumentError(absl::StrCat("cron \"", expr, "\": ", why));
  };
  if (fields.size() != 5)
    return fail(absl::StrCat("want 5 fields (minute hour day-of-month month day-of-week), got ", fields.size()));
  CronSchedule s;
  s.expr_ = std::string(absl::StripAsciiWhitespace(expr));
  std::vector<bool> bits[5];
  for (int i = 0; i < 5; ++i) {
    std::string why = ParseField(fields[i], kFields[i], &bits[i]);
    if (!why.empty()) return fail(absl::StrCat(kFields[i].name, " \"", fields[i], "\": ", why));
  }
  for (int v = 0; v < 60; ++v) s.minutes_[v] = bits[0][v];
  for (int v = 0; v < 24; ++v) s.hours_[v] = bits[1][v];
  for (int v = 1; v <= 31; ++v) s.days_[v] = bits[2][v];
  for (int v = 1; v <= 12; ++v) s.months_[v] = bits[3][v];
  for (int v = 0; v <= 7; ++v)
    if (bits[4][v]) s.weekdays_[v % 7] = true;
  s.days_restricted_ = fields[2][0] != '*';
  s.weekdays_restricted_ = fields[4][0] != '*';
  // Unless day-of-week may fire on its own (both restrict: OR), some chosen
  // day of the month must exist in some chosen month (February counted
  // with 29 days); every such day falls on every weekday over the years.
  if (!(s.days_restricted_ && s.weekdays_restricted_)) {
    bool possible = false;
    for (int m = 1; m <= 12 && !possible; ++m) {
      if (!s.months_[m]) continue;
      int max_day = DaysInMonth(2000, m);  // a leap year
      for (int d = 1; d <= max_day && !possible; ++d) possible = s.days_[d];
    }
    if (!possible)
      return fail(absl::StrCat("day-of-month \"", fields[2], "\" never occurs in month \"", fields[3],
                               "\", so it would never fire"));
  }
  return s;
}

bool CronSchedule::DayMatches(int year, int month, int day) const {
  bool dom = days_[day];
  bool dow = weekdays_[WeekdayIndex(absl::CivilDay(year, month, day))];
  // Vixie cron: OR when both restrict, else AND (a field beginning with *
  // still has its values: "*/10" is days 1, 11, 21, 31).
  if (days_restricted_ && weekdays_restricted_) return dom || dow;
  return dom && dow;
}

bool CronSchedule::Matches(int64_t t_us) const {
  absl::CivilMinute t = absl::ToCivilMinute(absl::FromUnixMicros(t_us), absl::UTCTimeZone());
  return months_[t.month()] && DayMatches(static_cast<int>(t.year()), t.month(), t.day()) && hours_[t.hour()] &&
         minutes_[t.minute()];
}

int64_t CronSchedule::Next(int64_t after_us) const {
  absl::CivilMinute t = absl::ToCivilMinute(absl::FromUnixMicros(after_us), absl::UTCTimeZone()) + 1;
  const int64_t last_year = t.year() + 10;
  // Skip whole months, days and hours that cannot match: at most a few
  // thousand steps over ten years.
  while (t.year() <= last_year) {
    if (!months_[t.month()]) {
      t = absl::CivilMinute(absl::CivilMonth(t) + 1);
    } else if (!DayMatches(static_cast<int>(t.year()), t.month(), t.day())) {
      t = absl::CivilMinute(absl::CivilDay(t) + 1);
    } else if (!hours_[t.hour()]) {
      t = absl::CivilMinute(absl::CivilHour(t) + 1);
    } else if (!minutes_[t.minute()]) {
      t += 1;
    } else {
      return absl::ToUnixMicros(absl::FromCivil(t, absl::UTCTimeZone()));
    }
  }
  return 0;
}

}  // namespace dualswarm::coord
