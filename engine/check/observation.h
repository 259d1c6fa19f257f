// Observations: what the tester saw on the wire, in the order it saw them.
// One JSON object per line (docs/trace-format.md):
//   {"label":1,"conn":0,"dir":"sent","msg":{...}}
//   {"label":2,"conn":0,"dir":"received","msg":{...}}
//   {"event":"closed","conn":0}            the connection was closed
//   {"event":"timeout","label":5,"conn":0} the tester gave up on a response
//   {"event":"fault","fault":"pause","node":1}  a fault the harness injected
//                                          (the checker skips it)
// plus an optional "t" (nanoseconds). Requests carry odd labels; a response
// carries its request's label + 1.
//
// An intermediary's trace has a second side: "side":"origin" on a line
// says it happened on a connection the SUT opened to the tester playing
// the origin. There the SUT's request is "received" (odd label) and the
// tester's answer "sent" (its label + 1); each side numbers its own
// connections and labels. Lines without "side" are the clients' side.
#ifndef DUALSWARM_ENGINE_CHECK_OBSERVATION_H_
#define DUALSWARM_ENGINE_CHECK_OBSERVATION_H_

#include <cstdint>
#include <string>
#include <vector>
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "engine/ir/value.h"

namespace dualswarm::check {

// Labels in a trace are below this (the checker numbers an intermediary's
// origin-side inputs above it, checker.h: kOriginLabelBase).
constexpr int64_t kLabelLimit = int64_t{1} << 62;

// Which side of an intermediary an observation is on (see above).
enum class Side { kClient, kOrigin };

struct Observation {
  enum class Kind { kSent, kReceived, kClosed, kTimeout, kFault };
  Kind kind = Kind::kSent;
  Side side = Side::kClient;  // kOrigin: sent/received/closed only
  int64_t label = 0;
  int64_t conn = 0;
  // sent/received: the message; fault: the event's fields but "event" and
  // "t" ({"fault": NAME, ...}).
  ir::Value msg;
  int64_t t = -1;  // nanoseconds, -1 when absent
  int line = 0;    // line in the trace file (0 when not from a file)
};

const char* ObservationKindName(Observation::Kind k);

// Converts one parsed JSON object to an observation (field checks only).
absl::StatusOr<Observation> ObservationFromValue(const ir::Value& v);
// One JSON line; errors are "line:col: message" relative to the line.
absl::StatusOr<Observation> ParseObservationLine(absl::string_view line);
// A whole JSON-lines trace; errors are "FILE:LINE:COL: message". Blank lines
// and lines starting with '#' are skipped.
absl::StatusOr<std::vector<Observation>> ParseTrace(absl::string_view file, absl::string_view text);

std::string ObservationToJson(const Observation& o);

}  // namespace dualswarm::check

#endif  // DUALSWARM_ENGINE_CHECK_OBSERVATION_H_
