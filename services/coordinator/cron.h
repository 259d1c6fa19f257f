// Cron: five-field cron expressions in UTC and their fire times, for the
// campaign scheduler. Pure (no clock, no I/O), so every rule is unit-tested.
//
//   minute hour day-of-month month day-of-week     e.g. "0 3 * * *", "*/15 9-17 * * 1-5"
//   0-59   0-23 1-31         1-12  0-7 (0 and 7 are Sunday)
//
// Each field is a comma-separated list of items: `*`, `N`, `A-B`, `*/S`,
// `A-B/S` (every S-th value from A to B). Names (JAN, MON), `?`, `L`, `W`,
// `#` and `@daily`-style macros are not accepted.
//
// Days follow Vixie cron: a day field that begins with `*` (`*`, `*/2`)
// counts as unrestricted. When both day-of-month and day-of-week are
// restricted, a day matching EITHER fires ("0 0 1 * 1": the 1st of each
// month and every Monday); otherwise a day must match both ("0 0 */10 * 1":
// Mondays that are the 1st, 11th, 21st or 31st).
//
// Parse refuses an expression that can never fire (day-of-month 30 or 31 in
// February only, 31 in months of 30 days) so a campaign cannot silently
// never run; "0 0 29 2 *" (every Feb 29) is fine.
#ifndef DUALSWARM_SERVICES_COORDINATOR_CRON_H_
#define DUALSWARM_SERVICES_COORDINATOR_CRON_H_

#include <bitset>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace dualswarm::coord {

class CronSchedule {
 public:
  // INVALID_ARGUMENT with the field, the item and why: e.g.
  // `cron "0 25 * * *": hour "25": 25 is out of range 0-23`.
  static absl::StatusOr<CronSchedule> Parse(absl::string_view expr);

  // The first fire time strictly after `after_us` (microseconds since the
  // Unix epoch, UTC); fire times are whole minutes. 0 if none within ten
  // years (not possible for an expression Parse accepted).
  int64_t Next(int64_t after_us) const;

  // Whether the minute containing `t_us` is a fire time.
  bool Matches(int64_t t_us) const;

  const std::string& expression() const { return expr_; }

 private:
  CronSchedule() = default;
  bool DayMatches(int year, int month, int day) const;

  std::string expr_;
  std::bitset<60> minutes_;
  std::bitset<24> hours_;
  std::bitset<32> days_;     // 1..31
  std::bitset<13> months_;   // 1..12
  std::bitset<7> weekdays_;  // 0..6, Sunday = 0 (7 is folded into 0)
  bool days_restricted_ = false;
  bool weekdays_restricted_ = false;
};

}  // namespace dualswarm::coord

#endif  // DUALSWARM_SERVICES_COORDINATOR_CRON_H_
